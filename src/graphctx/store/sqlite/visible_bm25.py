"""BM25 over the chunks the caller may see, and nothing else.

FTS5's ``bm25()`` weighs a term by how many chunks of the whole table contain it, hidden
ones included, so the order of two visible hits could tell a caller whether hidden chunks of
its own project use a word. Here FTS5 only finds the visible chunks that match; the score
is computed from statistics of the caller's visible chunks alone:

- ``N``: visible chunks of the namespace; ``n(t)``: visible matching chunks that hold ``t``;
- ``tf`` and the chunk's length: counted in the chunk's stored terms (our own analysis, one
  space between terms), by SQLite, so only small integers leave the database;
- ``avgdl``: mean length of the visible matching chunks.

The formula is FTS5's (k1 = 1.2, b = 0.75, idf = log((N - n + 0.5) / (n + 0.5)), floored
at 1e-6). Equal scores are broken by chunk row id, that is, by write order within the
namespace.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from typing import Final

__all__ = ["BM25_B", "BM25_K1", "rank_visible"]

BM25_K1: Final = 1.2
BM25_B: Final = 0.75
_MIN_IDF: Final = 1e-6


def _term_frequency_sql(column: str) -> str:
    """SQL for the number of whole-term occurrences of parameter ``?`` in ``column``."""
    spaced = f"(' ' || replace({column}, ' ', '  ') || ' ')"
    return (
        f"((length({spaced}) - length(replace({spaced}, ' ' || ? || ' ', ''))) / (length(?) + 2))"
    )


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
    frequencies = ", ".join(_term_frequency_sql("f.terms") for _ in terms)
    sql = f"""
        SELECT c.id, c.chunk_id, length(f.terms) - length(replace(f.terms, ' ', '')) + 1,
               {frequencies}
        FROM {table} f JOIN chunks c ON c.id = f.rowid
        WHERE {table} MATCH ? AND {scope_clause}
    """
    params: list[object] = [value for term in terms for value in (term, term)]
    rows = conn.execute(sql, [*params, expression, *scope_params]).fetchall()
    if not rows:
        return []
    visible = conn.execute(
        f"SELECT count(*) FROM chunks c WHERE c.namespace = ? AND {scope_clause}",
        [namespace, *scope_params],
    ).fetchone()[0]
    average_length = sum(row[2] for row in rows) / len(rows)
    holding = [sum(1 for row in rows if row[3 + i] > 0) for i in range(len(terms))]
    idf = [max(_MIN_IDF, math.log((visible - n + 0.5) / (n + 0.5))) for n in holding]
    scored = []
    for row in rows:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * row[2] / average_length)
        score = sum(
            idf[i] * tf * (BM25_K1 + 1) / (tf + norm) for i, tf in enumerate(row[3:]) if tf > 0
        )
        scored.append((-score, row[0], row[1]))
    scored.sort()
    return [(str(chunk_id), -negative) for negative, _, chunk_id in scored[:limit]]
