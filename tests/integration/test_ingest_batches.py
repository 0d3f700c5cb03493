"""Batched, overlapped ingest (issue 17): the store ends the same whatever the timing, and a
refused document is reported on its own with nothing of it written."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlite_rows import table_names, table_rows

from graphctx.embed import Embedder, Float32Array
from graphctx.ingest.batching import BATCH_CHARS, embed_workers
from graphctx.ingest.extract.offline import OfflineExtractor
from graphctx.ingest.pipeline import (
    PRE_CHECK_DOCUMENTS,
    IngestDefaults,
    IngestReport,
    ingest_sources,
)
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument
from graphctx.store.sqlite.store import SqliteGraphStore

NAMESPACE = "batches"
DEFAULTS = IngestDefaults(namespace=NAMESPACE, source_uri_prefix="test://batches")
HOLD_TIMEOUT_S = 60.0
WORDS = ("kafka", "lag", "alarm", "restart", "billing", "invoice", "salary", "deploy", "freeze")


def _text(n: int) -> str:
    paragraph = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(60))
    return "\n\n".join(f"{paragraph} part {n}.{k}." for k in range(4))


def _source(
    n: int, document_id: str | None = None, scopes: tuple[str, ...] = ("eng",)
) -> SourceDocument:
    meta = DocumentMetadata(document_id=document_id or f"doc-{n}", scopes=scopes)
    return SourceDocument(f"test://batches/{n}", MediaType.TEXT, _text(n), meta)


def _corpus() -> list[SourceDocument]:
    """Enough text for several batches, with a repeated id (a new version inside the run)."""
    sources = [_source(n) for n in range(120)]
    sources.insert(70, _source(199, document_id="doc-3"))
    assert sum(len(s.text) for s in sources) > 3 * BATCH_CHARS
    return sources


class OutOfOrderEmbedder:
    """The real embedder, whose first call finishes only after its second one did: the
    batches' embeddings complete out of order, deterministically (no sleeps)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.finished: list[int] = []
        self._calls = 0
        self._lock = threading.Lock()
        self._second_done = threading.Event()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Float32Array:
        with self._lock:
            self._calls += 1
            call = self._calls
        vectors = self.inner.embed_documents(texts)
        if call == 1:
            self._second_done.wait(HOLD_TIMEOUT_S)
        with self._lock:
            self.finished.append(call)
        if call == 2:
            self._second_done.set()
        return vectors

    def embed_query(self, text: str) -> Float32Array:
        return self.inner.embed_query(text)


def _contents(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in row order; only the ingest clock is left out."""
    conn = sqlite3.connect(path)
    try:
        return table_rows(conn, table_names(conn))  # WITHOUT ROWID tables: primary key order
    finally:
        conn.close()


def _ingest(path: Path, embedder: Embedder, sources: list[SourceDocument]) -> IngestReport:
    async def run() -> IngestReport:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            return await ingest_sources(
                store, embedder, sources, Path("/"), DEFAULTS, extractor=OfflineExtractor()
            )
        finally:
            await store.close()

    return asyncio.run(run())


def _summary(report: IngestReport) -> Any:
    return (
        [(d.origin, d.document_id, d.outcome, d.version, d.chunks) for d in report.documents],
        [(e.origin, e.code) for e in report.errors],
    )


@pytest.mark.skipif(embed_workers() < 2, reason="needs two embedding workers")
def test_the_store_ends_the_same_whether_embeddings_finish_in_order_or_not(
    tmp_path: Path, embedder: Embedder
) -> None:
    sources = _corpus()
    in_order = _ingest(tmp_path / "a.sqlite", embedder, sources)
    shuffled = OutOfOrderEmbedder(embedder)
    out_of_order = _ingest(tmp_path / "b.sqlite", shuffled, sources)
    assert shuffled.finished[:2] == [2, 1]  # the second batch really finished first
    assert _summary(out_of_order) == _summary(in_order)
    assert [d.document_id for d in in_order.documents].count("doc-3") == 2
    assert _contents(tmp_path / "b.sqlite") == _contents(tmp_path / "a.sqlite")


def test_a_refused_document_is_reported_alone_and_nothing_of_it_is_written(
    tmp_path: Path, embedder: Embedder
) -> None:
    path = tmp_path / "store.sqlite"
    _ingest(path, embedder, [_source(5, document_id="secret", scopes=("hr",))])
    wider = _source(6, document_id="secret", scopes=("hr", "eng"))  # would publish v1 to eng
    report = _ingest(path, embedder, [_source(1), wider, _source(2)])  # one batch
    assert _summary(report) == (
        [
            ("test://batches/1", "doc-1", "added", report.documents[0].version, 1),
            ("test://batches/2", "doc-2", "added", report.documents[1].version, 1),
        ],
        [("test://batches/6", "scope_widening_refused")],
    )
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            """SELECT d.document_id, d.version_seq, group_concat(s.scope) FROM documents d
               JOIN document_scopes s ON s.doc = d.id GROUP BY d.id ORDER BY d.id"""
        ).fetchall()
        secret_chunks = conn.execute(
            "SELECT count(*) FROM chunks WHERE chunk_id LIKE 'secret@%'"
        ).fetchone()
    finally:
        conn.close()
    assert rows == [("secret", 1, "hr"), ("doc-1", 1, "eng"), ("doc-2", 1, "eng")]
    assert secret_chunks == (1,)


class CountingReads(SqliteGraphStore):
    """The embedded store, counting the latest-version reads an ingest makes."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.single_reads = 0
        self.group_reads: list[int] = []

    async def latest_version(self, namespace: str, document_id: str) -> Any:
        self.single_reads += 1
        return await super().latest_version(namespace, document_id)

    async def latest_versions(self, namespace: str, document_ids: Sequence[str]) -> Any:
        self.group_reads.append(len(document_ids))
        return await super().latest_versions(namespace, document_ids)


def test_the_pre_check_reads_each_groups_first_ids_in_one_store_read(
    tmp_path: Path, embedder: Embedder
) -> None:
    sources = _corpus()  # 121 documents, "doc-3" twice (the second is decided by its write)

    async def run() -> tuple[list[IngestReport], list[int], int]:
        store = CountingReads(tmp_path / "store.sqlite")
        await store.open()
        try:
            reports = [
                await ingest_sources(store, embedder, sources, Path("/"), DEFAULTS)
                for _ in range(2)
            ]
            return reports, store.group_reads, store.single_reads
        finally:
            await store.close()

    (first, again), group_reads, single_reads = asyncio.run(run())
    assert (group_reads, single_reads) == ([PRE_CHECK_DOCUMENTS, 56] * 2, 0)
    assert [d.outcome.value for d in first.documents].count("added") == 120
    changed = [
        (d.document_id, d.outcome.value) for d in again.documents if d.outcome.value != "unchanged"
    ]
    assert changed == [("doc-3", "new_version")] * 2  # its two texts alternate
