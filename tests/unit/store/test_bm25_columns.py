"""The column-wise BM25 ranking gives exactly what the per-candidate loop it replaced gave.

The loop (kept here as the reference, as it was) scored each candidate in Python and sorted
by (score descending, ``order`` ascending), a stable sort. The columns compute the same
floats and must return the same ``(chunk_id, score)`` list, ties included: small integer
lengths and counts, repeated candidates and repeated ``order`` keys make exact ties common.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.store.bm25 import (
    BM25_B,
    BM25_K1,
    Candidate,
    PoolStatistics,
    rank_by_visible_bm25,
    rank_with_statistics,
    statistics_of,
)

_MIN_IDF = 1e-6


def loop_rank(
    candidates: Sequence[Candidate], pool: PoolStatistics, visible_chunks: int, limit: int
) -> list[tuple[str, float]]:
    """The replaced ``rank_with_statistics``. Its ``sum`` added left to right (Python 3.11);
    ``reduce(add)`` says so on any interpreter (3.12's ``sum`` compensates)."""
    if not candidates or limit <= 0 or pool.size == 0:
        return []
    average_length = max(1e-9, pool.total_length / pool.size)
    idf = [max(_MIN_IDF, math.log((visible_chunks - n + 0.5) / (n + 0.5))) for n in pool.holding]
    scored = []
    for candidate in candidates:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * candidate.length / average_length)
        score = functools.reduce(
            operator.add,
            (
                idf[i] * tf * (BM25_K1 + 1) / (tf + norm)
                for i, tf in enumerate(candidate.frequencies)
                if tf > 0
            ),
            0,
        )
        scored.append((-score, candidate.order, candidate.chunk_id))
    scored.sort(key=lambda entry: (entry[0], entry[1]))
    return [(chunk_id, -negative) for negative, _, chunk_id in scored[:limit]]


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[Candidate], int]:
    terms = draw(st.integers(1, 4))
    string_orders = draw(st.booleans())
    row = st.tuples(
        st.integers(0, 12) if not string_orders else st.sampled_from(["a", "b", "ab", "c", "10"]),
        st.integers(0, 40),
        st.tuples(*[st.integers(0, 3)] * terms),
    )
    rows = draw(st.lists(row, max_size=40))
    rows += draw(st.lists(st.sampled_from(rows), max_size=10)) if rows else []  # exact repeats
    candidates = [
        Candidate(order, f"c{n}", length, freqs) for n, (order, length, freqs) in enumerate(rows)
    ]
    visible = len(candidates) + draw(st.integers(0, 200))
    return candidates, visible


@settings(max_examples=400, deadline=None)
@given(pools(), st.integers(-1, 60))
def test_columns_rank_the_whole_pool_as_the_loop_did(
    pool: tuple[list[Candidate], int], limit: int
) -> None:
    candidates, visible = pool
    assert rank_by_visible_bm25(candidates, visible, limit) == loop_rank(
        candidates, statistics_of(candidates), visible, limit
    )


@settings(max_examples=300, deadline=None)
@given(pools(), st.integers(1, 60), st.data())
def test_columns_rank_part_of_a_pool_as_the_loop_did(
    pool: tuple[list[Candidate], int], limit: int, data: st.DataObject
) -> None:
    candidates, visible = pool
    whole = statistics_of(candidates)
    part = data.draw(st.lists(st.sampled_from(candidates), max_size=20)) if candidates else []
    assert rank_with_statistics(part, whole, visible, limit) == loop_rank(
        part, whole, visible, limit
    )
