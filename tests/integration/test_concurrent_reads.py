"""A store read that spans several statements sees one committed state, whatever commits.

The writer's commit is injected at an exact point inside a read (an SQLite trace callback on
the reader's connection), so the interleaving the chaos scenario hits by chance happens here
every time.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from graphctx.store.sqlite import schema
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.store.sqlite.vectors import VectorCache
from graphctx.store.sqlite.writes import write_document_version
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs, unit_vector

NAMESPACE = "concurrent"
EMBEDDER = "test-embedder"
MASK_STATEMENT = "JOIN document_scopes s ON s.doc = c.doc"  # the vector load's last query


def _commit_document(path: Path, document_id: str, scope: str) -> None:
    """Commit one document through the store's own write function, on its own connection."""
    conn = schema.connect(path, read_only=False)
    try:
        conn.execute("BEGIN IMMEDIATE")
        text = f"{document_id} first part\n\n{document_id} second part"
        write_document_version(
            conn, make_document(NAMESPACE, document_id, text, {scope}), paragraphs(text), EMBEDDER
        )
        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
        conn.execute("COMMIT")
    finally:
        conn.close()


def _commit_during(
    monkeypatch: pytest.MonkeyPatch, statement: str, commit: Callable[[], None]
) -> None:
    """Make reader connections run ``commit`` the first time they start ``statement``."""
    real_connect = schema.connect
    fired: list[bool] = []

    def connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
        conn = real_connect(path, read_only=read_only)
        if read_only:

            def trace(sql: str) -> None:
                if statement in sql and not fired:
                    fired.append(True)
                    commit()

            conn.set_trace_callback(trace)
        return conn

    monkeypatch.setattr(schema, "connect", connect)


def test_vector_search_sees_one_snapshot_when_a_write_commits_mid_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    store = SqliteGraphStore(path)

    async def scenario() -> list[str]:
        await store.open()
        try:
            _commit_document(path, "visible-doc", "a")
            _commit_during(
                monkeypatch, MASK_STATEMENT, lambda: _commit_document(path, "hidden-doc", "b")
            )
            query = unit_vector("visible-doc first part")
            hits = await store.vector_search(NAMESPACE, query, frozenset({"a"}), 10, far_deadline())
            return [hit.chunk_id for hit in hits]
        finally:
            await store.close()

    # Without one snapshot per read, the scope masks are read after the commit: a row for a
    # chunk the matrix does not hold (an IndexError), or a mask bit on the wrong row.
    assert sorted(asyncio.run(scenario())) == ["visible-doc@1#0", "visible-doc@1#1"]


def test_fetch_sees_one_snapshot_when_scopes_change_mid_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    store = SqliteGraphStore(path)

    def make_doc_public() -> None:
        conn = schema.connect(path, read_only=False)
        conn.execute("INSERT INTO document_scopes (scope, doc) SELECT 'public', id FROM documents")
        conn.close()

    async def scenario() -> list[frozenset[str]]:
        await store.open()
        try:
            _commit_document(path, "doc", "a")
            _commit_during(monkeypatch, "FROM document_scopes WHERE doc IN", make_doc_public)
            views = await store.fetch_chunks(
                NAMESPACE, ["doc@1#0"], frozenset({"a"}), far_deadline()
            )
            return [view.scopes for view in views]
        finally:
            await store.close()

    # The chunk row and its scopes come from one state: before the change.
    assert asyncio.run(scenario()) == [frozenset({"a"})]


def test_a_reader_on_an_older_snapshot_keeps_the_newer_cached_matrix(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    asyncio.run(SqliteGraphStore(path).open())
    _commit_document(path, "doc", "a")
    conn = schema.connect(path, read_only=True)
    cache = VectorCache()
    newer = cache.matrix_for(conn, NAMESPACE, 2)
    older = cache.matrix_for(conn, NAMESPACE, 1)  # a reader whose snapshot predates it
    again = cache.matrix_for(conn, NAMESPACE, 2)
    conn.close()
    assert (older.generation, again is newer) == (1, True)
    assert np.array_equal(again.chunk_rowids, newer.chunk_rowids)
