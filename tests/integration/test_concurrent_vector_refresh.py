"""After a commit, vector search reads only the new embeddings, and still ranks exactly as a
freshly opened store does, through appends, scope changes, deletes and reused row ids."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.store.records import ChunkHit
from graphctx.store.sqlite import schema, vectors
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs, unit_vector

NAMESPACE = "refresh"
WAIT_S = 10.0  # bounds every wait; the test takes milliseconds when the promise holds
SCOPES = frozenset({"eng", "hr"})


async def _write(store: SqliteGraphStore, document_id: str, text: str, scopes: set[str]) -> None:
    document = make_document(NAMESPACE, document_id, text, scopes)
    await store.write_document(document, paragraphs(text), "test-embedder")


async def _search(store: SqliteGraphStore, scopes: frozenset[str] = SCOPES) -> list[ChunkHit]:
    query = unit_vector("query")
    return await store.vector_search(NAMESPACE, query, scopes, 20, far_deadline())


async def _fresh_search(path: Path, scopes: frozenset[str] = SCOPES) -> list[ChunkHit]:
    fresh = SqliteGraphStore(path)
    await fresh.open()
    try:
        return await _search(fresh, scopes)
    finally:
        await fresh.close()


def test_refreshed_matrix_ranks_as_a_fresh_load_through_every_kind_of_write(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.sqlite"

    async def scenario() -> list[tuple[list[ChunkHit], list[ChunkHit]]]:
        store = SqliteGraphStore(path)
        await store.open()
        steps = [
            _write(store, "a", "alpha one\n\nalpha two", {"eng"}),
            _write(store, "b", "beta one\n\nbeta two\n\nbeta three", {"hr"}),  # append
            _write(store, "a", "alpha one\n\nalpha two", {"hr"}),  # scopes only
            _write(store, "a", "alpha one\n\nalpha revised", {"hr"}),  # new version
            store.delete_document(NAMESPACE, "b"),  # frees the highest row ids
            _write(store, "c", "gamma one\n\ngamma two\n\ngamma three", {"eng"}),  # reuses them
        ]
        compared = []
        try:
            for step in steps:
                await step
                for scopes in (SCOPES, frozenset({"eng"})):
                    compared.append(
                        (await _search(store, scopes), await _fresh_search(path, scopes))
                    )
        finally:
            await store.close()
        return compared

    for cached, fresh in asyncio.run(scenario()):
        assert cached == fresh


def test_a_commit_that_adds_chunks_reads_only_the_new_embeddings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_after: list[int] = []
    real_rows = vectors._rows

    def rows(conn: sqlite3.Connection, namespace: str, after: int) -> Iterator[tuple[int, bytes]]:
        read_after.append(after)
        return real_rows(conn, namespace, after)

    monkeypatch.setattr(vectors, "_rows", rows)

    async def scenario() -> None:
        store = SqliteGraphStore(tmp_path / "store.sqlite")
        await store.open()
        try:
            await _write(store, "a", "alpha one\n\nalpha two", {"eng"})
            await _search(store)
            await _write(store, "b", "beta one", {"eng"})
            await _search(store)
            await store.delete_document(NAMESPACE, "a")
            await _search(store)
        finally:
            await store.close()

    asyncio.run(scenario())
    # A full read, then only the rows after the cached last row id (2); a delete reads no
    # embedding at all (issue 17: the matrix drops the rows it held; it used to reload all).
    assert read_after == [-1, 2]


def test_a_reload_in_one_namespace_never_stalls_a_search_in_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    asyncio.run(SqliteGraphStore(path).open())
    slow_started, release = threading.Event(), threading.Event()
    real_rows = vectors._rows

    def rows(conn: sqlite3.Connection, namespace: str, after: int) -> Iterator[tuple[int, bytes]]:
        if namespace == "slow":  # a reload that takes as long as the test wants
            slow_started.set()
            release.wait(WAIT_S)
        return real_rows(conn, namespace, after)

    monkeypatch.setattr(vectors, "_rows", rows)
    cache = vectors.VectorCache()
    slow_conn, fast_conn = (schema.connect(path, read_only=True) for _ in range(2))
    slow = threading.Thread(target=cache.matrix_for, args=(slow_conn, "slow", 1))
    slow.start()
    assert slow_started.wait(WAIT_S)
    fast = threading.Thread(target=cache.matrix_for, args=(fast_conn, "fast", 1))
    fast.start()
    fast.join(WAIT_S / 2)
    fast_finished_during_slow_reload = not fast.is_alive()
    release.set()
    slow.join(WAIT_S)
    fast.join(WAIT_S)
    slow_conn.close()
    fast_conn.close()
    assert fast_finished_during_slow_reload
