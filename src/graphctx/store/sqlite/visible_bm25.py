"""The embedded store's half of :mod:`graphctx.store.bm25`: find and count in SQLite.

FTS5 finds, for each query term, the chunks that hold it (row ids, from the index alone);
the caller's visible ones are told apart in memory by the namespace's cached scope sets
(:class:`~graphctx.store.sqlite.namespace_stats.RowScopes`). The candidates are the visible
chunks holding any term (what the terms' OR matches), and only their stored terms (our own
analysis, one space between terms) are read: each one's length is counted by its spaces, and
each query term's occurrences only in the chunks FTS5 found holding it (a chunk whose stored
terms include the term always matches the term's phrase, so nothing is missed). The count of
visible chunks comes from the caller (cached per generation, :mod:`.namespace_stats`). Ties
keep write order (chunk row id).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from graphctx.store.bm25 import CandidateTable, best_rows
from graphctx.store.sqlite.fts5_query import or_expression
from graphctx.store.sqlite.namespace_stats import RowScopes

__all__ = ["occurrences", "rank_visible"]


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


def rank_visible(
    conn: sqlite3.Connection,
    table: str,
    terms: Sequence[str],
    rows: RowScopes,
    scopes: frozenset[str],
    visible: int,
    limit: int,
) -> list[tuple[str, float]]:
    """``(chunk_id, score)`` of the ``limit`` best chunks holding any of ``terms`` whose scope
    set meets ``scopes`` (``rows``: the namespace's at ``conn``'s generation); ``visible`` is
    the caller's count of visible chunks in the namespace."""
    holders = [rows.visible_among(_holding(conn, table, term), scopes) for term in terms]
    shown = np.unique(np.concatenate(holders)) if holders else np.zeros(0, dtype=np.int64)
    if shown.shape[0] == 0:
        return []
    rowids = shown.tolist()
    stored = dict(
        conn.execute(
            f"SELECT rowid, terms FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),),
        ).fetchall()
    )
    padded = [f" {stored[rowid]} " for rowid in rowids]
    frequencies = np.zeros((len(rowids), len(terms)), dtype=np.int64)
    for column, (term, holding) in enumerate(zip(terms, holders, strict=True)):
        at = np.searchsorted(shown, holding)
        frequencies[at, column] = [occurrences(padded[row], term) for row in at.tolist()]
    lengths = np.fromiter((text.count(" ") - 1 for text in padded), np.int64, len(padded))
    pool = CandidateTable(shown, lengths, frequencies)
    best = best_rows(pool, pool.statistics(), visible, limit)
    return _with_chunk_ids(conn, [(rowids[row], score) for row, score in best])


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
