"""Each chunk's length, irregular and repeated terms are recorded with it, removed with it,
and filled in on open for a store written before they were (schema versions 2 and 3).

:mod:`graphctx.store.sqlite.visible_bm25` trusts both to rank without reading every
candidate: a chunk missing from them, or left there after its delete, would change scores.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from pathlib import Path

import pytest

from graphctx.store.sqlite import fulltext
from graphctx.store.sqlite.schema import SCHEMA_VERSION
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.store.sqlite.term_shapes import irregular_terms, repeated_terms, term_count
from graphctx.store.sqlite.visible_bm25 import irregular_table, repeated_table
from graphctx.testing.fixtures import make_document, paragraphs

TEXTS = {
    "d1": "Don't pay the josé ledger\n\nThe ledger is paid, the ledger is closed",
    "d2": "① née 부당해고를 당했다\n\nplain words only",
    "d3": "it\u2019s über café",
}


def _write(path: Path) -> None:
    async def run() -> None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            for namespace in ("mine", "theirs"):
                for document_id, text in TEXTS.items():
                    document = make_document(namespace, document_id, text, {"a"})
                    await store.write_document(document, paragraphs(text), "test-embedder")
        finally:
            await store.close()

    asyncio.run(run())


Shapes = tuple[dict[int, int], dict[int, str], dict[int, str]]


def _recorded(conn: sqlite3.Connection) -> Shapes:
    lengths = {int(i): int(n) for i, n in conn.execute("SELECT id, terms FROM chunk_term_counts")}
    irregular: dict[int, str] = {}
    repeated: dict[int, str] = {}
    for namespace in ("mine", "theirs"):
        table = fulltext.table_of(conn, namespace)
        assert table is not None
        irregular.update(conn.execute(f"SELECT rowid, terms FROM {irregular_table(table)}"))
        repeated.update(conn.execute(f"SELECT rowid, terms FROM {repeated_table(table)}"))
    return lengths, irregular, repeated


def _expected(conn: sqlite3.Connection) -> Shapes:
    stored = fulltext.chunk_terms(conn)
    return (
        {rowid: term_count(terms) for rowid, terms in stored.items()},
        {rowid: irregular_terms(t) for rowid, t in stored.items() if irregular_terms(t)},
        {rowid: repeated_terms(t) for rowid, t in stored.items() if repeated_terms(t)},
    )


def test_writes_record_and_deletes_remove_lengths_and_irregular_terms() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite"
        _write(path)
        conn = sqlite3.connect(path)
        lengths, irregular, repeated = _recorded(conn)
        assert (lengths, irregular, repeated) == _expected(conn)
        assert len(lengths) == 10
        assert any("ledger" in terms for terms in repeated.values())
        assert any("don't" in terms for terms in irregular.values())
        deleted = {
            int(rowid)
            for (rowid,) in conn.execute(
                "SELECT id FROM chunks WHERE namespace = 'mine' AND chunk_id LIKE 'd1@%'"
            )
        }
        assert len(deleted) == 2
        assert deleted <= set(lengths)
        assert deleted & set(irregular)
        assert deleted & set(repeated)
        assert any("①" in terms and "née" in terms for terms in irregular.values())
        conn.close()

        async def delete() -> None:
            store = SqliteGraphStore(path)
            await store.open()
            try:
                await store.delete_document("mine", "d1")
            finally:
                await store.close()

        asyncio.run(delete())
        conn = sqlite3.connect(path)
        after = _recorded(conn)
        assert after == _expected(conn)
        assert len(after[0]) == 8
        assert not deleted & (set(after[0]) | set(after[1]) | set(after[2]))
        conn.close()


async def _search(path: Path) -> list[tuple[str, float]]:
    store = SqliteGraphStore(path)
    await store.open()
    try:
        hits = await store.fulltext_search("mine", "ledger don't", frozenset({"a"}), 10, 1e12)
    finally:
        await store.close()
    return [(hit.chunk_id, hit.score) for hit in hits]


@pytest.mark.parametrize("version", [2, 3])
def test_an_older_store_gets_them_on_open(version: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite"
        _write(path)
        found = asyncio.run(_search(path))
        conn = sqlite3.connect(path, isolation_level=None)
        recorded = _recorded(conn)
        tables = [str(fulltext.table_of(conn, ns)) for ns in ("mine", "theirs")]
        for table in tables:  # what a version-3 file looks like
            conn.execute(f"DROP TABLE {repeated_table(table)}")
        if version == 2:
            conn.execute("DROP TABLE chunk_term_counts")
            for table in tables:
                conn.execute(f"DROP TABLE {irregular_table(table)}")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
        conn.close()

        assert asyncio.run(_search(path)) == found
        assert [chunk for chunk, _ in found] == ["d1@1#1", "d1@1#0"]
        conn = sqlite3.connect(path)
        assert _recorded(conn) == recorded
        (stored_version,) = conn.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ).fetchone()
        assert int(stored_version) == SCHEMA_VERSION == 4
        conn.close()
