"""The embedded store's half of :mod:`graphctx.store.bm25`: find and count in SQLite.

FTS5 only finds the visible chunks that match; each one's length and the occurrences of each
query term are counted in its stored terms (our own analysis, one space between terms).
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
    namespace: str,
    terms: Sequence[str],
    expression: str,
    scope_clause: str,
    scope_params: Sequence[str],
    limit: int,
) -> list[tuple[str, float]]:
    """``(chunk_id, score)`` of the ``limit`` best visible chunks matching ``expression``."""
    sql = f"""
        SELECT c.id, c.chunk_id, f.terms
        FROM {table} f JOIN chunks c ON c.id = f.rowid
        WHERE {table} MATCH ? AND {scope_clause}
    """
    rows = conn.execute(sql, [expression, *scope_params]).fetchall()
    if not rows:
        return []
    (visible,) = conn.execute(
        f"SELECT count(*) FROM chunks c WHERE c.namespace = ? AND {scope_clause}",
        [namespace, *scope_params],
    ).fetchone()
    candidates = []
    for rowid, chunk_id, indexed in rows:
        words = str(indexed).split(" ")
        frequencies = tuple(words.count(term) for term in terms)
        candidates.append(Candidate(int(rowid), str(chunk_id), len(words), frequencies))
    return rank_by_visible_bm25(candidates, int(visible), limit)
