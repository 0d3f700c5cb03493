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

import numpy as np
import numpy.typing as npt

__all__ = [
    "BM25_B",
    "BM25_K1",
    "Candidate",
    "CandidateTable",
    "PoolStatistics",
    "best_rows",
    "idf",
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
    if not candidates:
        return []
    terms = len(candidates[0].frequencies)
    table = CandidateTable(
        [c.order for c in candidates],
        np.fromiter((c.length for c in candidates), dtype=np.int64, count=len(candidates)),
        np.array([c.frequencies for c in candidates], dtype=np.int64).reshape(-1, terms),
    )
    return [
        (candidates[r].chunk_id, score)
        for r, score in best_rows(table, pool, visible_chunks, limit)
    ]


@dataclass(frozen=True)
class CandidateTable:
    """:class:`Candidate` fields but the chunk id as columns: row ``r`` is one candidate."""

    orders: Sequence[int | str] | npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]  # (rows,)
    frequencies: npt.NDArray[np.int64]  # (rows, query terms)

    def statistics(self) -> PoolStatistics:
        """The pool statistics when the table is the whole pool."""
        return PoolStatistics(
            int(self.lengths.shape[0]),
            int(self.lengths.sum()),
            tuple(int(n) for n in (self.frequencies > 0).sum(axis=0).tolist()),
        )


def idf(visible_chunks: int, holding: int) -> float:
    """A term's weight when ``holding`` of the pool's chunks hold it."""
    return max(_MIN_IDF, math.log((visible_chunks - holding + 0.5) / (holding + 0.5)))


def best_rows(
    table: CandidateTable, pool: PoolStatistics, visible_chunks: int, limit: int
) -> list[tuple[int, float]]:
    """``(row, score)`` of the ``limit`` best rows of ``table``, best first: as
    :func:`rank_with_statistics`, over columns. Each score is the same float the
    per-candidate sum gives (the same operations in the same order: the terms a candidate
    holds added left to right, a term it lacks adding an exact 0.0), so the order, ties
    included, is the same: score descending, then ``order`` ascending, then input order."""
    rows = int(table.lengths.shape[0])
    if rows == 0 or limit <= 0 or pool.size == 0:
        return []
    average_length = max(1e-9, pool.total_length / pool.size)
    weights = [idf(visible_chunks, n) for n in pool.holding]
    norm = BM25_K1 * ((1 - BM25_B) + (BM25_B * table.lengths) / average_length)
    scores = np.zeros(rows, dtype=np.float64)
    for i, weight in enumerate(weights):
        tf = table.frequencies[:, i]
        part = weight * tf * (BM25_K1 + 1) / (tf + norm)
        scores += np.where(tf > 0, part, 0.0)
    negative = -scores
    chosen = np.arange(rows)
    if limit < rows:  # every row tied with the limit-th best stays for the tie-break
        kth = np.partition(negative, limit - 1)[limit - 1]
        chosen = np.flatnonzero(negative <= kth)
    order = np.lexsort((_order_keys(table.orders, chosen), negative[chosen]))[:limit]
    best = chosen[order].tolist()
    return [(r, float(scores[r])) for r in best]


def _order_keys(
    orders: Sequence[int | str] | npt.NDArray[np.int64], chosen: npt.NDArray[np.intp]
) -> npt.NDArray[np.int64]:
    """Integer keys of ``orders[chosen]`` that sort as the orders do."""
    if isinstance(orders, np.ndarray):
        return orders[chosen]
    picked = [orders[r] for r in chosen.tolist()]
    ranks = {value: n for n, value in enumerate(sorted(set(picked)))}
    return np.fromiter((ranks[v] for v in picked), dtype=np.int64, count=len(picked))
