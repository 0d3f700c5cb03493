"""The in-process writer of ``ingest-while-retrieving``: store writes with embeddings ready.

Documents are loaded, chunked and embedded once, in the scenario's set-up, with the ingest
pipeline's own functions; a trial then only *writes*, in rounds: every document of pass 2,
then of pass 1, and so on (each round supersedes the last: new versions, scope-only
changes, unchanged documents, additions), then deletes a few documents and writes them
again. Embedding is kept out of the trial on purpose: the promise is about the store
blocking readers, and embedding on a shared 2-core machine would measure CPU contention.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from graphctx.embed import Embedder
from graphctx.ingest.loaders import load_path
from graphctx.ingest.pipeline import IngestDefaults, build_document, embed_chunks
from graphctx.store.records import NewChunk, NewDocument
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.chaos.ingest_corpus import CORPUS_NAMESPACE, DEFAULT_SCOPE
from graphctx_lab.chaos.ingest_driver import SOURCE_URI_PREFIX

__all__ = ["PacedWriter", "PreparedDocument", "WriterReport", "prepare_documents"]

DELETED_PER_ROUND = 4


@dataclass(frozen=True)
class PreparedDocument:
    document: NewDocument
    chunks: tuple[NewChunk, ...]

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        return tuple((c.start_char, c.end_char) for c in self.chunks)


@dataclass
class WriterReport:
    transaction_ms: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def transactions_per_write_s(self) -> float:
        """Throughput while writing (pauses excluded), with the readers running."""
        busy_s = sum(self.transaction_ms) / 1000
        return len(self.transaction_ms) / busy_s if busy_s else 0.0


def prepare_documents(folder: Path, embedder: Embedder) -> list[PreparedDocument]:
    """Every document under ``folder``, as the ingest child would build and embed it."""
    defaults = IngestDefaults(
        namespace=CORPUS_NAMESPACE, scopes=(DEFAULT_SCOPE,), source_uri_prefix=SOURCE_URI_PREFIX
    )
    prepared = []
    for result in load_path(folder):
        if result.document is None:
            raise RuntimeError(f"corpus file failed to load: {result.origin}")
        document = build_document(result.document, folder, defaults)
        chunks = tuple(embed_chunks(result.document, embedder))
        prepared.append(PreparedDocument(document, chunks))
    return prepared


class PacedWriter:
    """A writer with its own store instance on the file (as a separate ingest would), run on
    its own event loop in the caller's thread; use as a context manager.

    Paced: after each transaction it waits ``idle_ratio`` times as long as the transaction
    took, so writes take ``1 / (1 + idle_ratio)`` of its time, as in a real ingest, which
    embeds between writes (measured: write transactions are about a fifth of the ingest
    child's run). A writer committing back to back from the readers' own process would
    measure the interpreter lock it holds, not the store.
    """

    def __init__(self, path: Path, embedder_name: str, idle_ratio: float = 3.0) -> None:
        self.store = SqliteGraphStore(path)
        self.embedder_name = embedder_name
        self.idle_ratio = idle_ratio
        self.report = WriterReport()
        self._runner = asyncio.Runner()
        self._pause = threading.Event()  # never set: a timed wait is the pacing itself

    def __enter__(self) -> Self:
        self._runner.run(self.store.open())
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            self._runner.run(self.store.close())
        finally:
            self._runner.close()

    def write_round(self, documents: Sequence[PreparedDocument], rng: random.Random) -> None:
        """Write every document, then delete a few and write them again."""
        started = time.monotonic()
        for prepared in documents:
            self._timed(self.store.write_document(*self._args(prepared)))
        for prepared in rng.sample(list(documents), DELETED_PER_ROUND):
            document_id = prepared.document.document_id
            self._timed(self.store.delete_document(CORPUS_NAMESPACE, document_id))
            self._timed(self.store.write_document(*self._args(prepared)))
        self.report.elapsed_s += time.monotonic() - started

    def _args(self, prepared: PreparedDocument) -> tuple[NewDocument, tuple[NewChunk, ...], str]:
        return prepared.document, prepared.chunks, self.embedder_name

    def _timed(self, transaction: Coroutine[Any, Any, object]) -> None:
        started = time.monotonic()
        self._runner.run(transaction)
        took_s = time.monotonic() - started
        self.report.transaction_ms.append(took_s * 1000)
        self._pause.wait(took_s * self.idle_ratio)
