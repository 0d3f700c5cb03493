"""Ingest batches: documents grouped for one embedding call and one store write.

Batches are cut from the documents' order and sizes alone (never from timing), so the same
input always makes the same batches, the same embedder calls and the same writes. A batch
ends once it holds ``BATCH_CHARS`` characters of text or ``BATCH_DOCUMENTS`` documents, and
before a document id it already holds: a later write of an id must see the earlier one's
result (its compare-and-set expectation), which is known only once that batch is written.

A batch is embedded in slices of about ``EMBED_CHARS`` characters (``embed_slices``), one
worker task each, so both cores stay busy to the end of the input (a batch's embedding takes
about a second: the last one alone on one core left the other idle that long). Each slice runs
``embed_sources`` in a worker thread: it chunks each document with exact spans and embeds the
slice's documents together (``graphctx.embed.port.embed_each``), every document's vectors
bitwise as its own call gives them. The pipeline runs ``embed_workers()`` of these at once
(the offline embedders release the GIL in numpy / their C engine), while the batch before
them is written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from graphctx.embed.port import Embedder, embed_each
from graphctx.ingest.chunking import chunk_document
from graphctx.ingest.source import SourceDocument
from graphctx.store.records import NewChunk, NewDocument

__all__ = [
    "BATCH_CHARS",
    "BATCH_DOCUMENTS",
    "EMBED_CHARS",
    "MAX_EMBED_WORKERS",
    "BatchCutter",
    "PendingDocument",
    "embed_slices",
    "embed_sources",
    "embed_workers",
]

BATCH_CHARS: Final = 64_000  # text per batch: about 50-130 chunks of the default chunk size
BATCH_DOCUMENTS: Final = 256  # documents per batch (short records)
EMBED_CHARS: Final = 16_000  # text per embedding task: a quarter of a batch, ~0.25 s of work
MAX_EMBED_WORKERS: Final = 4  # embedding threads at most, whatever the core count


@dataclass(frozen=True)
class PendingDocument:
    """A document that passed the pre-checks and will be embedded and written."""

    index: int  # its place in the ingest's input (results are reported in that order)
    source: SourceDocument
    document: NewDocument


def embed_workers() -> int:
    """Embedding threads: one per core, at most ``MAX_EMBED_WORKERS``."""
    return max(1, min(os.cpu_count() or 1, MAX_EMBED_WORKERS))


class BatchCutter:
    """Groups documents, in order, into batches (the rules in the module docstring; the
    limits are ``BATCH_CHARS`` and ``BATCH_DOCUMENTS`` unless a benchmark asks for others)."""

    def __init__(self, max_chars: int = BATCH_CHARS, max_documents: int = BATCH_DOCUMENTS) -> None:
        self._max_chars, self._max_documents = max_chars, max_documents
        self._batch: list[PendingDocument] = []
        self._chars = 0
        self._ids: set[str] = set()

    def add(self, pending: PendingDocument) -> list[list[PendingDocument]]:
        """Add a document; return the batches it closed (none, one or two)."""
        closed = []
        if pending.document.document_id in self._ids:
            closed.append(self.flush())
        self._batch.append(pending)
        self._chars += len(pending.document.text)
        self._ids.add(pending.document.document_id)
        if self._chars >= self._max_chars or len(self._batch) >= self._max_documents:
            closed.append(self.flush())
        return closed

    def flush(self) -> list[PendingDocument]:
        """The open batch (possibly empty); the next document starts a new one."""
        batch = self._batch
        self._batch, self._chars, self._ids = [], 0, set()
        return batch


def embed_slices(
    batch: Sequence[PendingDocument], max_chars: int = EMBED_CHARS
) -> list[list[SourceDocument]]:
    """A batch's documents, in order, cut into embedding tasks: each ends once it holds
    ``max_chars`` characters of text (the last one may hold less)."""
    slices: list[list[SourceDocument]] = [[]]
    held = 0
    for pending in batch:
        if held >= max_chars:
            slices.append([])
            held = 0
        slices[-1].append(pending.source)
        held += len(pending.source.text)
    return slices if slices[0] else []


def embed_sources(sources: Sequence[SourceDocument], embedder: Embedder) -> list[list[NewChunk]]:
    """Every document's chunks, exact spans, embedded (run in a worker thread): everything a
    version writes besides the document row, before its transaction opens.

    A document's vectors must not depend on the other documents that happened to be ingested
    with it (an embedder's last bits depend on which texts share its matrix products), so
    each document gets the vectors of its own embedder call, every bit: ``embed_each`` shares
    calls only where the embedder can keep those bits."""
    spans_of = [chunk_document(source) for source in sources]
    vectors_of = embed_each(embedder, [[span.text for span in spans] for spans in spans_of])
    return [
        [
            NewChunk(s.ordinal, s.start_char, s.end_char, s.text, vectors[i], s.heading_path)
            for i, s in enumerate(spans)
        ]
        for spans, vectors in zip(spans_of, vectors_of, strict=True)
    ]
