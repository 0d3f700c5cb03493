"""The embedded store's read connections cannot change the file, whatever SQL they are given.

Retrieval runs only on ``SqliteGraphStore._reader()`` connections, so a bug (or an injected
statement) on the read path must not be able to write: every attempt below is refused, and the
file's committed content (an SQL dump read on a fresh connection) is the same afterwards.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.errors import StoreUnavailableError
from graphctx.store.sqlite.store import SqliteGraphStore

WRITE_ATTEMPTS = {
    "insert": "INSERT INTO meta (key, value) VALUES ('planted', 'x')",
    "update": "UPDATE meta SET value = 'forged' WHERE key = 'generation'",
    "delete": "DELETE FROM meta",
    "create": "CREATE TABLE planted (x INTEGER)",
    "create_temp": "CREATE TEMP TABLE planted (x INTEGER)",
    "drop": "DROP TABLE node_names",
    "query_only_off": "PRAGMA query_only = OFF",
    "query_only_false": "PRAGMA main.query_only = false",
    "attach": "ATTACH DATABASE ':memory:' AS planted",
}
"""Each is refused on its own; ``query_only_off`` and ``attach`` are the ways around
``PRAGMA query_only`` (turn it off, or write to a second database) and must fail too."""


@pytest.fixture
def opened_store(tmp_path: Path) -> Iterator[SqliteGraphStore]:
    store = SqliteGraphStore(tmp_path / "store.sqlite")
    asyncio.run(store.open())
    try:
        yield store
    finally:
        asyncio.run(store.close())


def store_dump(path: Path) -> str:
    """Everything committed to the file, as SQL text, read on a connection of our own."""
    conn = sqlite3.connect(path)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def _reader_of(store: SqliteGraphStore) -> sqlite3.Connection:
    return store._reader()  # the read path's own connection, as retrieval gets it


@pytest.mark.parametrize("statement", WRITE_ATTEMPTS.values(), ids=WRITE_ATTEMPTS.keys())
def test_a_read_connection_refuses_every_kind_of_write(
    opened_store: SqliteGraphStore, statement: str
) -> None:
    before = store_dump(opened_store.path)
    with pytest.raises(sqlite3.DatabaseError):
        _reader_of(opened_store).execute(statement)
    assert store_dump(opened_store.path) == before


def test_turning_query_only_off_then_writing_never_reaches_the_file(
    opened_store: SqliteGraphStore,
) -> None:
    before = store_dump(opened_store.path)
    reader = _reader_of(opened_store)
    for statement in ("PRAGMA query_only = OFF", "DELETE FROM meta"):
        try:
            reader.execute(statement)
        except sqlite3.DatabaseError:
            continue
    assert reader.execute("PRAGMA query_only").fetchone() == (1,)
    assert store_dump(opened_store.path) == before


def test_a_write_smuggled_into_the_read_path_is_a_typed_store_error(
    opened_store: SqliteGraphStore,
) -> None:
    before = store_dump(opened_store.path)

    def delete_and_commit(conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA query_only = OFF")
        conn.execute("DELETE FROM meta")
        conn.execute("COMMIT")  # escape the read snapshot's rollback

    with pytest.raises(StoreUnavailableError) as refused:
        asyncio.run(opened_store._read(delete_and_commit, None))
    assert refused.value.retryable is False
    assert store_dump(opened_store.path) == before
