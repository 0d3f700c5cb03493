"""The embedded store's batch write queues chunk rows and indexes them after the batch's
documents (store/sqlite/chunk_rows.py): the rows it leaves are the rows one-by-one writes
leave, and a batch that fails part-way leaves nothing, full-text index included."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlite_rows import table_names, table_rows

from graphctx.errors import InvalidDocumentError, StoreUnavailableError
from graphctx.store.records import DocumentWrite, Expectation, NewChunk, NewDocument
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import make_document, paragraphs, unit_vector

NAMESPACE = "rows"
EMBEDDER = "t"
# FTS5's segment blobs: their layout depends on when FTS5 flushed, never what it holds
# (the table itself, its vocabulary and its per-row sizes are compared instead).
_SEGMENT_SUFFIXES = ("_data", "_idx")


def _doc(document_id: str, text: str, scopes: set[str]) -> NewDocument:
    return make_document(NAMESPACE, document_id, text, scopes, title=f"Title {document_id}")


def _write(document_id: str, text: str, scopes: set[str], expected: Any = None) -> DocumentWrite:
    return DocumentWrite(_doc(document_id, text, scopes), tuple(paragraphs(text)), expected)


def _seed() -> list[DocumentWrite]:
    return [
        _write("x", "an earlier document\n\nkafka", {"eng"}),
        _write("s", "unredacted salary", {"hr"}),
    ]


def _plan() -> list[DocumentWrite]:
    """New documents, a second version in the same batch, a scope change, a conflict that
    is refused and a scope widening that is refused, between documents with chunks."""
    return [
        _write("a", "kafka lag alarm\n\nrunbook restarting brokers", {"eng"}),
        _write("b", "부당해고를 당한 근로자\n\nsalary review", {"hr"}),
        _write("c", "billing invoices\n\nkafka consumers\n\nthird part", {"eng", "ops"}),
        _write("a", "kafka lag alarm, revised\n\nrunbook", {"eng"}),  # a new version of a
        _write("s", "redacted salary", {"hr", "eng"}),  # widens the older version: refused
        _write("d", "stale expectation", {"ops"}, Expectation(None)),  # d is new: holds
        _write("c", "billing", {"eng"}, Expectation(None)),  # c exists: refused (conflict)
        _write("c", "billing invoices\n\nkafka consumers\n\nthird part", {"eng"}),  # narrows
        _write("e", "deploy freeze\n\nrestarted the deploys", {"ops"}),
    ]


def _contents(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table but FTS5's segment blobs; the ingest clock and the write
    generation (one per commit) left out."""
    conn = sqlite3.connect(path)
    try:
        tables = [t for t in table_names(conn) if not t.endswith(_SEGMENT_SUFFIXES)]
        dump: dict[str, list[Any]] = {
            table: [r for r in rows if r[:2] != (None, None)]
            for table, rows in table_rows(conn, tables, order_without_rowid="ORDER BY 1, 2").items()
        }
        dump["meta"] = [r for r in dump["meta"] if "generation" not in r]
        fts = [t for t in tables if t.startswith("chunk_fts_") and t[10:].isdigit()]
        for table in fts:  # FTS5's own consistency check of its index against its rows
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
        dump["fulltext vocabulary"] = [
            conn.execute(f"SELECT term, doc, cnt FROM {t}_vocab ORDER BY term").fetchall()
            for t in fts
        ]
        return dump
    finally:
        conn.close()


def _with_store(path: Path, work: Any) -> Any:
    async def run() -> Any:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            return await work(store)
        finally:
            await store.close()

    return asyncio.run(run())


def _one_by_one(path: Path, writes: Sequence[DocumentWrite]) -> list[Any]:
    async def work(store: SqliteGraphStore) -> list[Any]:
        out: list[Any] = []
        for w in writes:
            try:
                out.append(
                    await store.write_document(w.document, w.chunks, EMBEDDER, expected=w.expected)
                )
            except InvalidDocumentError as exc:
                out.append(exc.code)
        return out

    result: list[Any] = _with_store(path, work)
    return result


def _batched(path: Path, writes: Sequence[DocumentWrite]) -> list[Any]:
    async def work(store: SqliteGraphStore) -> list[Any]:
        results = await store.write_documents(NAMESPACE, writes, EMBEDDER)
        return [r.code if isinstance(r, InvalidDocumentError) else r for r in results]

    result: list[Any] = _with_store(path, work)
    return result


def test_a_batch_leaves_the_rows_and_index_that_one_by_one_writes_leave(tmp_path: Path) -> None:
    single, batch = tmp_path / "single.sqlite", tmp_path / "batch.sqlite"
    for path in (single, batch):
        _one_by_one(path, _seed())
    one_by_one = _one_by_one(single, _plan())
    in_one = _batched(batch, _plan())
    assert in_one == one_by_one
    assert [r if isinstance(r, str) else r.outcome.value for r in in_one] == [
        "added",
        "added",
        "added",
        "new_version",
        "scope_widening_refused",
        "added",
        "document_id_conflict",
        "scopes_updated",
        "added",
    ]
    assert _contents(batch) == _contents(single)


def test_a_failure_mid_batch_leaves_no_row_and_no_index_entry(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    _one_by_one(path, _seed())
    before = _contents(path)
    bad = _doc("bad", "kafka billing notes", {"eng"})
    batch = [
        *_plan()[:4],  # documents with chunks queued, a savepoint released, ...
        DocumentWrite(bad, (NewChunk(0, 0, 5, "not the text", unit_vector("x")),)),
        *_plan()[4:],
    ]
    with pytest.raises(ValueError, match="does not match its span"):
        _batched(path, batch)
    assert _contents(path) == before
    # The store goes on as if the failed batch never ran: the same rows as on a fresh copy.
    again = tmp_path / "again.sqlite"
    _one_by_one(again, _seed())
    assert _batched(path, _plan()) == _batched(again, _plan())
    assert _contents(path) == _contents(again)


def test_a_failure_in_the_batch_insert_of_its_chunks_leaves_nothing(tmp_path: Path) -> None:
    """Two chunks with one ordinal pass every check of their document and fail only when the
    batch's chunk rows are inserted, after every document's savepoint was released."""
    path = tmp_path / "store.sqlite"
    _one_by_one(path, _seed())
    before = _contents(path)
    text = "twice the\n\nsame ordinal"
    first, second = paragraphs(text)
    twin = NewChunk(0, second.start_char, second.end_char, second.text, second.embedding)
    clash = DocumentWrite(_doc("clash", text, {"eng"}), (first, twin))
    with pytest.raises(StoreUnavailableError, match="UNIQUE constraint failed"):
        _batched(path, [*_plan()[:3], clash, *_plan()[3:]])
    assert _contents(path) == before
