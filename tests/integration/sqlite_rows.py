"""The rows of a SQLite store file, table by table, for comparing two stores' contents."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

CLOCK_COLUMN = "ingested_at"  # when a row was written: differs between any two writes


def table_names(conn: sqlite3.Connection) -> list[str]:
    return [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        )
    ]


def table_rows(
    conn: sqlite3.Connection, tables: Sequence[str], *, order_without_rowid: str = ""
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of each table but its ingest clock, in rowid order; a table without rowids
    (WITHOUT ROWID, or a virtual table such as an FTS5 vocabulary) in ``order_without_rowid``
    (an ORDER BY clause; none: the table's own order)."""
    dump = {}
    for table in tables:
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        kept = ", ".join(c for c in columns if c != CLOCK_COLUMN)
        try:
            rows = conn.execute(f"SELECT rowid, {kept} FROM {table} ORDER BY rowid")
        except sqlite3.OperationalError:
            rows = conn.execute(f"SELECT {kept} FROM {table} {order_without_rowid}")
        dump[table] = rows.fetchall()
    return dump
