"""The embedded store's half of :mod:`graphctx.store.bm25`: find and count in SQLite.

FTS5 finds, for each query term, the chunks that hold it (row ids, from the index alone);
the caller's visible ones are told apart in memory by the namespace's cached scope sets
(:class:`~graphctx.store.sqlite.namespace_stats.RowScopes`). The candidates are the visible
chunks holding any term (what the terms' OR matches). The count of visible chunks comes from
the caller and every candidate's length from the namespace's cache (both per generation,
:mod:`.namespace_stats`). Ties keep write order (chunk row id).

Reading every candidate's stored terms to count the query terms was most of the stage, and
most candidates cannot reach the top ``limit``. So the pool's statistics are found without
reading every candidate, and candidates are read lazily:

- ``n(t)``: a chunk FTS5 finds for ``t`` may not hold ``t`` (``don't`` gives the tokens
  ``don`` and ``t``; see :mod:`.term_shapes`). For a regular ``t``, a match that does not
  also match ``t`` among the chunk's irregular terms (the namespace's second table) got the
  token from a regular stored term, which is ``t``: it holds ``t``. Only the chunks matching
  in both tables, and every match of an irregular ``t`` (rare), are read to count ``t``.
- Counts: a regular ``t`` a chunk holds more than once is among its repeated terms (the
  namespace's third table, :func:`~graphctx.store.sqlite.term_shapes.repeated_terms`). A
  candidate holding every term it matched (not doubtful) none of which matches among its
  repeated terms holds each exactly once: it is counted without being read.
- MaxScore: the other unread candidates hold each term they matched at least once, so any
  one of them at most ``length - matched + 1`` times (the query terms are distinct; the
  length counts the stored terms), and such a candidate's score is at most BM25 at its own
  length with that count for each repeated term and one for the others (the score grows
  with the count). They are read, highest bound first, in batches, until no unread one's
  bound reaches the ``limit``-th best exact score; a bound equal to it is read (ties are
  broken exactly, by row id). The rows left unread score strictly below every returned row.

Each read row's count of each term it matched is the number of its stored terms equal to the
term, and its score the float :func:`~graphctx.store.bm25.best_rows` gives any row from the
same pool statistics: the hits and scores are those of counting every candidate.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from graphctx.store.bm25 import BM25_B, BM25_K1, CandidateTable, PoolStatistics, best_rows, idf
from graphctx.store.sqlite.fts5_query import or_expression
from graphctx.store.sqlite.namespace_stats import RowScopes
from graphctx.store.sqlite.term_shapes import is_regular

__all__ = ["irregular_table", "occurrences", "rank_visible", "repeated_table"]


def occurrences(padded: str, term: str) -> int:
    """How many of the space-separated terms of ``padded`` (" " + terms + " ") equal ``term``;
    the space after one occurrence may open the next."""
    needle = f" {term} "
    step = len(needle) - 1
    count = 0
    at = padded.find(needle)
    while at >= 0:
        count += 1
        at = padded.find(needle, at + step)
    return count


def _holding(conn: sqlite3.Connection, table: str, term: str) -> npt.NDArray[np.int64]:
    """Row ids of the chunks whose terms match ``term``'s phrase, hidden ones included, as
    one comma-separated string: a term can match thousands of chunks, and one row per chunk
    cost three times the search itself."""
    expression = or_expression([term])
    (joined,) = conn.execute(
        f"SELECT group_concat(rowid, ',') FROM {table} WHERE {table} MATCH ?", (expression,)
    ).fetchone()
    if not joined:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(joined, dtype=np.int64, sep=",")


def irregular_table(table: str) -> str:
    """The name of the table holding ``table``'s chunks' irregular terms."""
    return f"{table}_irregular"


def repeated_table(table: str) -> str:
    """The name of the table holding ``table``'s chunks' repeated regular terms."""
    return f"{table}_repeated"


def _also_matching(
    conn: sqlite3.Connection,
    table: str,
    terms: Sequence[str],
    holders: Sequence[npt.NDArray[np.int64]],
) -> list[npt.NDArray[np.int64]]:
    """Per term, its holders that also match it in ``table`` (all of them for an irregular
    term). Both sides are ascending row ids, each once (FTS5 matches a row once)."""
    return [
        np.intersect1d(holding, _holding(conn, table, term), assume_unique=True)
        if is_regular(term)
        else holding
        for term, holding in zip(terms, holders, strict=True)
    ]


def rank_visible(
    conn: sqlite3.Connection,
    table: str,
    terms: Sequence[str],
    rows: RowScopes,
    lengths: npt.NDArray[np.int64],
    scopes: frozenset[str],
    visible: int,
    limit: int,
) -> list[tuple[str, float]]:
    """``(chunk_id, score)`` of the ``limit`` best chunks holding any of ``terms`` whose scope
    set meets ``scopes`` (``rows``: the namespace's at ``conn``'s generation, ``lengths``
    their lengths); ``visible`` is the caller's count of visible chunks in the namespace."""
    holders = [rows.visible_among(_holding(conn, table, term), scopes) for term in terms]
    shown, places = rows.union(holders)
    if shown.shape[0] == 0 or limit <= 0:
        return []
    pool = _Pool(conn, table, terms, shown, lengths[places])
    for column, holding in enumerate(holders):
        pool.matched[np.searchsorted(shown, holding), column] = True
    doubtful = _also_matching(conn, irregular_table(table), terms, holders)
    pool.read(np.unique(np.searchsorted(shown, np.concatenate(doubtful))))
    repeated = np.zeros_like(pool.matched)
    for column, holding in enumerate(_also_matching(conn, repeated_table(table), terms, holders)):
        repeated[np.searchsorted(shown, holding), column] = True
    pool.count_once(repeated)
    statistics = pool.statistics()
    best = pool.best(statistics, visible, limit, np.flatnonzero(pool.done))
    bound = pool.bounds(statistics, visible, repeated)
    batch = max(limit, _MIN_BATCH)
    while True:
        kth = best[-1][1] if len(best) == limit else -math.inf
        waiting = np.flatnonzero(~pool.done & (bound * (1 + _BOUND_SLACK) >= kth))
        if waiting.shape[0] == 0:
            break
        order = np.argsort(-bound[waiting], kind="stable")[:batch]
        picked = waiting[order]
        pool.read(picked)
        # The best of the read rows are the best of the previous best and the rows just read:
        # the order (score, then row id) is total, and a row's score does not depend on which
        # rows are ranked with it.
        kept = np.fromiter((row for row, _ in best), dtype=np.intp, count=len(best))
        best = pool.best(statistics, visible, limit, np.concatenate([kept, picked]))
    return _with_chunk_ids(conn, [(int(shown[row]), score) for row, score in best])


_MIN_BATCH: Final = 64  # candidates read per round past the first ``limit``
_BOUND_SLACK: Final = 1e-9  # relative: a bound is read when within this of the k-th score


class _Pool:
    """The candidates (``shown``, ascending row ids) with what is known of each: which terms
    FTS5 matched, and once read, its exact count of each."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        terms: Sequence[str],
        shown: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.int64],
    ) -> None:
        self._conn = conn
        self._table = table
        self._terms = terms
        self.shown = shown
        self.lengths = lengths
        self.matched = np.zeros((shown.shape[0], len(terms)), dtype=np.bool_)
        self.frequencies = np.zeros((shown.shape[0], len(terms)), dtype=np.int64)
        self.done = np.zeros(shown.shape[0], dtype=np.bool_)

    def read(self, picked: npt.NDArray[np.intp]) -> None:
        """Read the stored terms of the candidates at ``picked`` and count the terms each
        matched."""
        if picked.shape[0] == 0:
            return
        stored = dict(
            self._conn.execute(
                f"""SELECT rowid, terms FROM {self._table}
                    WHERE rowid IN (SELECT value FROM json_each(?))""",
                (json.dumps(self.shown[picked].tolist()),),
            ).fetchall()
        )
        padded = {rowid: f" {terms} " for rowid, terms in stored.items()}
        for column, term in enumerate(self._terms):
            rows = picked[self.matched[picked, column]]
            self.frequencies[rows, column] = [
                occurrences(padded[rowid], term) for rowid in self.shown[rows].tolist()
            ]
        self.done[picked] = True

    def statistics(self) -> PoolStatistics:
        """The whole pool's: a matched candidate holds the term unless it was read (every
        candidate whose holding was in doubt was) and counted none."""
        holds = self.matched & (~self.done[:, None] | (self.frequencies > 0))
        return PoolStatistics(
            int(self.shown.shape[0]),
            int(self.lengths.sum()),
            tuple(int(n) for n in holds.sum(axis=0).tolist()),
        )

    def count_once(self, repeated: npt.NDArray[np.bool_]) -> None:
        """Settle without reading every unread candidate none of whose matched terms is in
        ``repeated`` (rows x terms: it holds the term more than once): it holds each exactly
        once. The others get a count of one for their terms not repeated."""
        unread = ~self.done
        self.frequencies[unread] = self.matched[unread] & ~repeated[unread]
        self.done[unread & ~(self.matched & repeated).any(axis=1)] = True

    def bounds(
        self, statistics: PoolStatistics, visible: int, repeated: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.float64]:
        """Per candidate, the most an unread one can score: BM25 at its length with each
        term it matched counted once, or, where ``repeated``, ``length - matched + 1`` times
        (every other term it matched takes at least one of its stored terms)."""
        average_length = max(1e-9, statistics.total_length / statistics.size)
        norm = BM25_K1 * ((1 - BM25_B) + (BM25_B * self.lengths) / average_length)
        most = np.maximum(self.lengths - self.matched.sum(axis=1) + 1, 1)
        counts = np.where(self.matched & repeated, most[:, None], self.matched)
        weights = np.array([idf(visible, n) for n in statistics.holding], dtype=np.float64)
        parts = weights * counts * (BM25_K1 + 1) / (counts + norm[:, None])
        bounds: npt.NDArray[np.float64] = np.where(counts > 0, parts, 0.0).sum(axis=1)
        return bounds

    def best(
        self, statistics: PoolStatistics, visible: int, limit: int, read: npt.NDArray[np.intp]
    ) -> list[tuple[int, float]]:
        """``(candidate, score)`` of the ``limit`` best of the read candidates at ``read``."""
        table = CandidateTable(self.shown[read], self.lengths[read], self.frequencies[read])
        return [
            (int(read[row]), score) for row, score in best_rows(table, statistics, visible, limit)
        ]


def _with_chunk_ids(
    conn: sqlite3.Connection, ranked: list[tuple[int, float]]
) -> list[tuple[str, float]]:
    """``ranked`` (keyed by chunk row id) with each row's chunk id."""
    if not ranked:
        return []
    ids = dict(
        conn.execute(
            "SELECT id, chunk_id FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([key for key, _ in ranked]),),
        ).fetchall()
    )
    return [(str(ids[key]), score) for key, score in ranked]
