"""BM25 from the statistics of the caller's visible chunks, shared by both backends.

A full-text engine's own BM25 (FTS5's ``bm25()``, Lucene's similarity) weighs a term by
every chunk of its index, hidden ones and, with a shared index, other projects' included, so
the order of two visible hits could tell a caller whether hidden documents use a word. The
backends therefore only *find* the visible matching chunks and count, per chunk, its length
and how often each query term occurs in its stored terms; this module scores them from:

- ``N``: the caller's visible chunks of the namespace;
- ``n(t)``: visible matching chunks that hold ``t``;
- ``avgdl``: mean length of the visible matching chunks.

The formula is FTS5's (k1 = 1.2, b = 0.75, idf = log((N - n + 0.5) / (n + 0.5)), floored at
1e-6). Equal scores keep the order of ``Candidate.order``, which each backend chooses
independent of hidden documents.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "BM25_B",
    "BM25_K1",
    "Candidate",
    "PoolStatistics",
    "rank_by_visible_bm25",
    "rank_with_statistics",
    "statistics_of",
]

BM25_K1: Final = 1.2
BM25_B: Final = 0.75
_MIN_IDF: Final = 1e-6


@dataclass(frozen=True)
class Candidate:
    """One visible matching chunk: its tie-break key, id, length and per-term counts."""

    order: int | str
    chunk_id: str
    length: int
    frequencies: tuple[int, ...]  # one per query term, in the query's order


@dataclass(frozen=True)
class PoolStatistics:
    """What BM25 needs from the whole pool of visible matching chunks."""

    size: int
    total_length: int
    holding: tuple[int, ...]  # per query term: candidates that hold it


def statistics_of(candidates: Sequence[Candidate]) -> PoolStatistics:
    terms = len(candidates[0].frequencies) if candidates else 0
    return PoolStatistics(
        len(candidates),
        sum(c.length for c in candidates),
        tuple(sum(1 for c in candidates if c.frequencies[i] > 0) for i in range(terms)),
    )


def rank_by_visible_bm25(
    candidates: Sequence[Candidate], visible_chunks: int, limit: int
) -> list[tuple[str, float]]:
    """``(chunk_id, score)`` of the ``limit`` best candidates, best first."""
    return rank_with_statistics(candidates, statistics_of(candidates), visible_chunks, limit)


def rank_with_statistics(
    candidates: Sequence[Candidate], pool: PoolStatistics, visible_chunks: int, limit: int
) -> list[tuple[str, float]]:
    """As :func:`rank_by_visible_bm25`, scoring ``candidates`` (any part of the pool) from the
    whole pool's statistics: the same scores as ranking the whole pool."""
    if not candidates or limit <= 0 or pool.size == 0:
        return []
    average_length = max(1e-9, pool.total_length / pool.size)
    idf = [max(_MIN_IDF, math.log((visible_chunks - n + 0.5) / (n + 0.5))) for n in pool.holding]
    scored = []
    for candidate in candidates:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * candidate.length / average_length)
        score = sum(
            idf[i] * tf * (BM25_K1 + 1) / (tf + norm)
            for i, tf in enumerate(candidate.frequencies)
            if tf > 0
        )
        scored.append((-score, candidate.order, candidate.chunk_id))
    scored.sort(key=lambda entry: (entry[0], entry[1]))
    return [(chunk_id, -negative) for negative, _, chunk_id in scored[:limit]]
