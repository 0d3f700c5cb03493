"""Ingest: load files, chunk with exact spans, embed, and write in batched transactions.

Idempotent: a document whose text and metadata are unchanged is skipped before embedding;
a changed one becomes a new version and its predecessor reads as stale. A bad file is
reported with its reason and the rest proceeds; nothing is ever half-written.

Throughput: documents go in batches (:mod:`graphctx.ingest.batching`), each embedded as a few
tasks by worker threads, a batch or two ahead, while the batch before them is written in one
transaction (``GraphStore.write_documents``). Batches depend on the input alone and are
written in input order, so the store ends the same whatever the timing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from graphctx.contract.request import (
    NAME_PATTERN,
    NAMESPACE_PATTERN,
    is_namespace_name,
    is_scope_name,
)
from graphctx.embed.port import Embedder
from graphctx.errors import DocumentConflictError, InvalidDocumentError, InvalidRequestError
from graphctx.ingest.batching import (
    BatchCutter,
    PendingDocument,
    embed_slices,
    embed_sources,
    embed_workers,
)
from graphctx.ingest.extract.port import ExtractionInput, ExtractionReport, GraphExtractor
from graphctx.ingest.loaders import load_path
from graphctx.ingest.scope_ceiling import check_scope_ceiling, document_scopes
from graphctx.ingest.source import SourceDocument
from graphctx.store.namespace_embedder import require_same_embedder
from graphctx.store.port import GraphStore
from graphctx.store.records import (
    DocumentDates,
    DocumentWrite,
    Expectation,
    NewChunk,
    NewDocument,
    StoredVersion,
    WriteOutcome,
    check_expectation,
    with_page_starts,
)

Chunks = tuple[tuple[str, str], ...]  # (chunk_id, text) of one version, in document order
Embedded = asyncio.Future[list[list[NewChunk]]]  # one embedding task's documents' chunks

GRAPH_CHECK_TIMEOUT_S = 30.0  # reading whether an unchanged document has its graph
PRE_CHECK_DOCUMENTS = 64  # documents built, and their latest versions read, per store hand-off


@dataclass(frozen=True)
class IngestDefaults:
    """Values for documents that do not carry their own (flags of the CLI / API call)."""

    namespace: str = "default"
    scopes: tuple[str, ...] = ()
    source_uri_prefix: str | None = None  # default: the file's absolute file:// URI
    # The most a document's own scopes (front matter, sidecar) may name; None: no limit.
    # The service always sets the key's grant; CLI and library callers opt in.
    permitted_scopes: frozenset[str] | None = None


@dataclass(frozen=True)
class IngestedDocument:
    """What one document's ingest did (the service's wire model is ``DocumentOutcome``)."""

    origin: str
    document_id: str
    outcome: WriteOutcome
    version: str
    chunks: int


@dataclass(frozen=True)
class FileError:
    origin: str
    code: str
    message: str


@dataclass(frozen=True)
class SkippedFile:
    """A file a folder walk did not load, and why (an unsupported type, a symlinked folder)."""

    origin: str
    reason: str


@dataclass
class IngestReport:
    namespace: str
    documents: list[IngestedDocument] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    elapsed_s: float = 0.0
    graph: ExtractionReport | None = None  # when an extractor ran over the written documents

    @property
    def chunks_written(self) -> int:
        return sum(d.chunks for d in self.documents)

    def count(self, outcome: WriteOutcome) -> int:
        return sum(1 for d in self.documents if d.outcome is outcome)


async def ingest_path(
    store: GraphStore,
    embedder: Embedder,
    path: Path,
    defaults: IngestDefaults,
    *,
    progress: bool = False,
    extractor: GraphExtractor | None = None,
) -> IngestReport:
    """Load a file or folder and ingest every document in it; bad files are reported."""
    _validate_defaults(defaults)
    if not path.exists():
        raise InvalidRequestError(f"{path} does not exist", field="path")
    root = path if path.is_dir() else path.parent
    started = time.monotonic()
    results = await asyncio.to_thread(lambda: list(load_path(path)))
    errors = [
        FileError(r.origin, r.error.code, r.error.message) for r in results if r.error is not None
    ]
    sources = [r.document for r in results if r.document is not None]
    report = await ingest_sources(
        store, embedder, sources, root, defaults, progress=progress, extractor=extractor
    )
    report.errors[:0] = errors
    report.skipped = [SkippedFile(r.origin, r.skipped) for r in results if r.skipped is not None]
    report.elapsed_s = time.monotonic() - started
    return report


async def ingest_sources(
    store: GraphStore,
    embedder: Embedder,
    sources: Sequence[SourceDocument],
    root: Path,
    defaults: IngestDefaults,
    *,
    progress: bool = False,
    extractor: GraphExtractor | None = None,
    expected: Mapping[str, Expectation] | None = None,
) -> IngestReport:
    """Ingest already loaded documents (the HTTP face sends these); one transaction each.

    ``expected`` maps document ids to what the caller's permission check saw. With it, every
    write is conditional (compare-and-set inside the store's write transaction): a document
    that moved since the check, or whose id the map lacks, is reported as
    ``document_id_conflict`` and nothing of it is written. A later document of the same id in
    the batch expects what the earlier one wrote.

    With an ``extractor``, the documents written (added or new versions) then go through
    graph extraction, with the chunk ids their writes returned; the draft is written in one
    more transaction. Unchanged documents keep their graph. An unchanged document whose
    latest version has no graph at all joins the extraction: an earlier run wrote it and
    stopped (killed, failed) before its graph transaction committed. So a re-run extracts
    exactly the batch an uninterrupted run would have, and converges.
    """
    _validate_defaults(defaults)
    # Refused before anything is embedded; the write transaction checks again, atomically.
    stored = await store.namespace_embedder(defaults.namespace)
    require_same_embedder(defaults.namespace, stored, embedder.name)
    report = IngestReport(namespace=defaults.namespace)
    started = time.monotonic()
    run = _Run(store, embedder, defaults, None if expected is None else dict(expected))
    await run.ingest(sources, root, progress)
    to_extract: list[tuple[SourceDocument, str]] = []
    # Each document's latest chunks (id, text), as its write returned them or as read for
    # the graph check; every extracted source of that id gets its latest ones.
    latest_chunks: dict[str, Chunks] = {}
    for source, slot in zip(sources, run.slots, strict=True):
        if isinstance(slot, FileError):
            report.errors.append(slot)
            continue
        assert slot is not None, "every source ends written, unchanged or refused"
        outcome, chunks = slot
        report.documents.append(outcome)
        if extractor is None:
            continue
        if chunks is None:
            chunks = await _chunks_without_graph(store, defaults.namespace, outcome.document_id)
        if chunks is not None:
            latest_chunks[outcome.document_id] = chunks
            to_extract.append((source, outcome.document_id))
    if extractor is not None and to_extract:
        inputs = [
            extraction_input(source, document_id, latest_chunks[document_id], root)
            for source, document_id in to_extract
        ]
        report.graph = await write_extracted(store, extractor, defaults.namespace, inputs)
    report.elapsed_s = time.monotonic() - started
    return report


# What became of one source: its outcome with, when this run wrote a version, that version's
# chunks (id, text) in document order; or why it was refused.
Slot = tuple[IngestedDocument, Chunks | None] | FileError


class _Run:
    """One ingest's documents through pre-check, embedding (worker threads, a batch or two
    ahead) and batched writes, in input order (:mod:`graphctx.ingest.batching`)."""

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        defaults: IngestDefaults,
        expectations: dict[str, Expectation] | None,
    ) -> None:
        self.store, self.embedder, self.defaults = store, embedder, defaults
        self.expectations = expectations
        self.slots: list[Slot | None] = []
        self._seen: set[str] = set()
        self._workers = embed_workers()

    async def ingest(self, sources: Sequence[SourceDocument], root: Path, progress: bool) -> None:
        self.slots = [None] * len(sources)
        loop = asyncio.get_running_loop()
        cutter = BatchCutter()
        embedding: deque[tuple[list[PendingDocument], list[Embedded]]] = deque()
        resolved_root = root.resolve()
        with ThreadPoolExecutor(self._workers, thread_name_prefix="graphctx-embed") as pool:
            try:
                bar = tqdm(
                    total=len(sources), desc="ingest", unit="doc", disable=not progress, leave=False
                )
                for start in range(0, len(sources), PRE_CHECK_DOCUMENTS):
                    group = sources[start : start + PRE_CHECK_DOCUMENTS]
                    for pending in await self._pre_check(start, group, resolved_root):
                        for batch in cutter.add(pending):
                            embedding.append((batch, self._embed(loop, pool, batch)))
                            # Write the oldest batch once the batches after it hold a task for
                            # every worker: the workers embed those while it is written.
                            while (
                                sum(len(tasks) for _, tasks in embedding) - len(embedding[0][1])
                                >= self._workers
                            ):
                                await self._write(*embedding.popleft())
                    bar.update(len(group))
                bar.close()
                last = cutter.flush()
                if last:
                    embedding.append((last, self._embed(loop, pool, last)))
                while embedding:
                    await self._write(*embedding.popleft())
            finally:
                for _, tasks in embedding:
                    for task in tasks:
                        task.cancel()

    def _embed(
        self,
        loop: asyncio.AbstractEventLoop,
        pool: ThreadPoolExecutor,
        batch: list[PendingDocument],
    ) -> list[Embedded]:
        return [
            loop.run_in_executor(pool, embed_sources, sources, self.embedder)
            for sources in embed_slices(batch)
        ]

    async def _pre_check(
        self, first: int, sources: Sequence[SourceDocument], resolved_root: Path
    ) -> list[PendingDocument]:
        """Build a group of documents (input positions from ``first``); report each one
        refused or unchanged here (nothing to embed) or return it to embed. A repeated id is
        decided by its write alone: the store is read only for an id's first document, before
        any document of the run has written it, in one read for the group's first ids."""
        built: list[tuple[PendingDocument, bool]] = []  # and whether its id is new to the run
        for index, source in enumerate(sources, first):
            try:
                document = build_document(source, resolved_root, self.defaults, resolved=True)
            except InvalidDocumentError as exc:
                self.slots[index] = FileError(source.origin, exc.code, exc.message)
                continue
            new = document.document_id not in self._seen
            self._seen.add(document.document_id)
            built.append((PendingDocument(index, source, document), new))
        new_ids = [pending.document.document_id for pending, new in built if new]
        stored = await self.store.latest_versions(self.defaults.namespace, new_ids)
        return [
            pending
            for pending, new in built
            if not new or self._changed(pending, stored.get(pending.document.document_id))
        ]

    def _changed(self, pending: PendingDocument, latest: StoredVersion | None) -> bool:
        """Whether the first document of its id is to be embedded and written; else it is
        reported here, refused (its expectation) or unchanged."""
        source, document = pending.source, pending.document
        try:
            check_expectation(self._expected(document.document_id, source.origin), latest)
        except InvalidDocumentError as exc:
            self.slots[pending.index] = FileError(source.origin, exc.code, exc.message)
            return False
        if latest is not None and (latest.content_hash, latest.metadata_hash, latest.scopes) == (
            document.content_hash,
            document.metadata_hash,
            document.scopes,
        ):
            unchanged = IngestedDocument(
                source.origin, document.document_id, WriteOutcome.UNCHANGED, latest.version, 0
            )
            self.slots[pending.index] = (unchanged, None)
            self._settle(document.document_id, latest)
            return False
        return True

    def _expected(self, document_id: str, origin: str) -> Expectation | None:
        if self.expectations is None:
            return None
        expected = self.expectations.get(document_id)
        if expected is None:
            raise DocumentConflictError(path=origin)
        return expected

    def _settle(self, document_id: str, latest: StoredVersion | None) -> None:
        """A later document of the same id expects what this one left."""
        if self.expectations is not None:
            self.expectations[document_id] = Expectation(latest)

    async def _write(self, batch: list[PendingDocument], tasks: list[Embedded]) -> None:
        chunks_of = [chunks for task in tasks for chunks in await task]
        writes: list[DocumentWrite] = []
        written: list[tuple[PendingDocument, list[NewChunk]]] = []
        for pending, chunks in zip(batch, chunks_of, strict=True):
            try:
                expected = self._expected(pending.document.document_id, pending.source.origin)
            except DocumentConflictError as exc:
                self.slots[pending.index] = FileError(pending.source.origin, exc.code, exc.message)
                continue
            writes.append(DocumentWrite(pending.document, tuple(chunks), expected))
            written.append((pending, chunks))
        if not writes:
            return
        results = await self.store.write_documents(
            self.defaults.namespace, writes, self.embedder.name
        )
        for (pending, chunks), result in zip(written, results, strict=True):
            origin = pending.source.origin
            if isinstance(result, InvalidDocumentError):
                self.slots[pending.index] = FileError(origin, result.code, result.message)
                continue
            self._settle(result.document_id, result.latest)
            outcome = IngestedDocument(
                origin, result.document_id, result.outcome, result.version, result.chunks_written
            )
            if result.outcome not in (WriteOutcome.ADDED, WriteOutcome.NEW_VERSION):
                self.slots[pending.index] = (outcome, None)
                continue
            in_order = sorted(
                zip(result.chunk_ids, chunks, strict=True), key=lambda w: w[1].ordinal
            )
            self.slots[pending.index] = (outcome, tuple((cid, c.text) for cid, c in in_order))


async def write_extracted(
    store: GraphStore,
    extractor: GraphExtractor,
    namespace: str,
    documents: Sequence[ExtractionInput],
) -> ExtractionReport:
    """Run ``extractor`` (in a worker thread: it may block) and write its draft in one
    transaction; an empty draft writes nothing."""
    draft = await asyncio.to_thread(extractor.extract, documents)
    if not draft.empty:
        await store.write_graph(namespace, draft.nodes, draft.relations)
    return draft.report


def extraction_input(
    source: SourceDocument, document_id: str, chunks: Chunks, root: Path
) -> ExtractionInput:
    """A written document as an extractor sees it."""
    return ExtractionInput(
        document_id=document_id,
        title=source.metadata.title,
        metadata=dict(source.metadata.extra),
        relative_path=_relative(source.origin, root),
        chunks=chunks,
    )


async def _chunks_without_graph(
    store: GraphStore, namespace: str, document_id: str
) -> Chunks | None:
    """The latest version's chunks when no knowledge node is supported by any of them.

    The offline extractor gives every document its document node, so then only a document
    whose extraction never committed has none. A document in which an extractor finds
    nothing (a concept extractor may) is extracted again on the next run: repeated work,
    never a wrong graph, since graph writes are upserts."""
    latest = await store.latest_version(namespace, document_id)
    chunks = await store.document_chunks(namespace, document_id)
    if latest is None or not chunks:
        return None
    deadline = time.monotonic() + GRAPH_CHECK_TIMEOUT_S
    ids = [chunk.chunk_id for chunk in chunks]
    if await store.nodes_for_chunks(namespace, ids, latest.scopes, deadline):
        return None
    return tuple((chunk.chunk_id, chunk.text) for chunk in chunks)


def _relative(origin: str, root: Path) -> str | None:
    path = Path(origin.partition("#")[0])
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.name or None


def _validate_defaults(defaults: IngestDefaults) -> None:
    if not is_namespace_name(defaults.namespace):
        raise InvalidRequestError(
            f"namespace {defaults.namespace!r} must match {NAMESPACE_PATTERN}", field="namespace"
        )
    for scope in defaults.scopes:
        if not is_scope_name(scope):
            raise InvalidRequestError(f"scope {scope!r} must match {NAME_PATTERN}", field="scopes")


def embed_chunks(source: SourceDocument, embedder: Embedder) -> list[NewChunk]:
    """One document's chunks with exact spans, embedded: everything its version writes
    besides the document row, computed before the write transaction opens."""
    (chunks,) = embed_sources([source], embedder)
    return chunks


def build_document(
    source: SourceDocument, root: Path, defaults: IngestDefaults, *, resolved: bool = False
) -> NewDocument:
    """Fill defaults from the path and flags; reject a document left without scopes.
    ``resolved``: ``root`` is already resolved (an ingest resolves it once, not per document)."""
    meta = source.metadata
    fragment = source.locator or ""
    origin = source.origin[: -(len(fragment) + 1)] if fragment else source.origin
    origin_path = Path(origin)
    resolved_origin = origin_path.resolve()
    try:
        relative = resolved_origin.relative_to(root if resolved else root.resolve()).as_posix()
    except ValueError:
        relative = origin_path.name
    document_id = meta.document_id or (f"{relative}#{fragment}" if fragment else relative)
    scopes = document_scopes(source, defaults.scopes)
    check_scope_ceiling(source, scopes, defaults.permitted_scopes)
    if not scopes:
        raise InvalidDocumentError(
            f"{source.origin} has no scopes: set them in front matter, a sidecar or --scope",
            path=source.origin,
            code="missing_scopes",
        )
    if defaults.source_uri_prefix is not None:
        source_uri = meta.source_uri or defaults.source_uri_prefix.rstrip("/") + "/" + relative
    else:
        source_uri = meta.source_uri or resolved_origin.as_uri()
    if fragment and meta.source_uri is None:
        source_uri += "#" + fragment
    dates = DocumentDates(meta.created_at, meta.updated_at, meta.valid_from, meta.valid_to)
    extra = with_page_starts(meta.extra, source.page_starts)
    described = {
        "source_uri": source_uri,
        "title": meta.title,
        "source_version": meta.source_version,
        "media_type": source.media_type.value,
        "dates": [
            d.isoformat() if d else None
            for d in (dates.created_at, dates.updated_at, dates.valid_from, dates.valid_to)
        ],
        "superseded_by": meta.superseded_by,
        "extra": dict(sorted(extra.items())),
    }
    return NewDocument(
        namespace=defaults.namespace,
        document_id=document_id,
        source_uri=source_uri,
        scopes=scopes,
        source_version=meta.source_version,
        title=meta.title,
        media_type=source.media_type.value,
        text=source.text,
        dates=dates,
        declared_superseded_by=meta.superseded_by,
        content_hash=hashlib.sha256(source.text.encode("utf-8")).hexdigest(),
        metadata_hash=hashlib.sha256(
            json.dumps(described, sort_keys=True, ensure_ascii=False).encode("utf-8")
        ).hexdigest(),
        extra=extra,
    )
