"""The embedded store hands each fetched chunk its text's analysed terms, read from the
full-text index, only for a file whose terms this analyser wrote."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from graphctx.store.records import ChunkView, DocumentWrite, NewChunk
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline, make_document, unit_vector
from graphctx.text.lexical import index_terms

NAMESPACE = "terms"
TEXTS = ("Restarting the gateways", "부당해고를 금지한다", "")


def _fetched(path: Path) -> list[ChunkView]:
    async def scenario() -> list[ChunkView]:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            ids = [f"d@1#{i}" for i in range(len(TEXTS))]
            return await store.fetch_chunks(NAMESPACE, ids, frozenset({"eng"}), far_deadline())
        finally:
            await store.close()

    return asyncio.run(scenario())


def _write(path: Path) -> None:
    text = "".join(TEXTS)
    document = make_document(NAMESPACE, "d", text, {"eng"}, title="Kafka lag runbook")
    chunks, start = [], 0
    for ordinal, part in enumerate(TEXTS):
        heading = ("Ops", "장애 대응") if ordinal != 1 else ()
        chunks.append(NewChunk(ordinal, start, start + len(part), part, unit_vector(part), heading))
        start += len(part)

    async def scenario() -> None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            results = await store.write_documents(
                NAMESPACE, [DocumentWrite(document, tuple(chunks), None)], "test-embedder"
            )
            assert not [r for r in results if isinstance(r, Exception)]
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_fetched_chunk_carries_the_analysed_terms_of_its_text_alone(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    _write(path)

    views = _fetched(path)

    assert [v.text for v in views] == list(TEXTS)
    assert [v.text_terms for v in views] == [index_terms(text) for text in TEXTS]


def test_a_file_that_does_not_name_this_analyser_gives_no_terms(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    _write(path)
    with sqlite3.connect(path) as conn:  # as a file created by an older graphctx
        conn.execute("DELETE FROM meta WHERE key = 'analyser'")

    assert [v.text_terms for v in _fetched(path)] == [None] * len(TEXTS)
