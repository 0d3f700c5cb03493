"""The embedded store's half of :mod:`graphctx.store.bm25`: find and count in SQLite.

FTS5 only finds the visible chunks that match; each one's length and the occurrences of each
query term are counted in its stored terms (our own analysis, one space between terms): the
length by its spaces, each query term by one substring count, without splitting it. The
count of visible chunks comes from the caller (cached per generation, :mod:`.namespace_stats`).
Ties keep write order (chunk row id).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from graphctx.store.bm25 import Candidate, rank_by_visible_bm25

__all__ = ["rank_visible"]


def rank_visible(
    conn: sqlite3.Connection,
    table: str,
    terms: Sequence[str],
    expression: str,
    scope_clause: str,
    scope_params: Sequence[str],
    visible: int,
    limit: int,
) -> list[tuple[str, float]]:
    """``(chunk_id, score)`` of the ``limit`` best visible chunks matching ``expression``;
    ``visible`` is the caller's count of visible chunks in the namespace."""
    sql = f"""
        SELECT c.id, c.chunk_id, f.terms
        FROM {table} f JOIN chunks c ON c.id = f.rowid
        WHERE {table} MATCH ? AND {scope_clause}
    """
    rows = conn.execute(sql, [expression, *scope_params]).fetchall()
    if not rows:
        return []
    needles = [f" {term} " for term in terms]
    candidates = []
    for rowid, chunk_id, indexed in rows:
        text = str(indexed)
        # Each stored term between its own two spaces, so adjacent repeats count apart.
        spaced = " " + text.replace(" ", "  ") + " "
        frequencies = tuple(spaced.count(needle) for needle in needles)
        candidates.append(Candidate(int(rowid), str(chunk_id), text.count(" ") + 1, frequencies))
    return rank_by_visible_bm25(candidates, visible, limit)
