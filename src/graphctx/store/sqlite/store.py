"""SqliteGraphStore: the embedded default GraphStore, one SQLite file on disk.

Writes run in one ``BEGIN IMMEDIATE`` transaction per call (one document, or a batch of them
with a savepoint each), so a crash leaves either the whole write or nothing. Reads use
per-thread connections with ``query_only`` on, and a progress handler that aborts a query
past its deadline. Every read applies the caller's scopes inside the SQL (or, for vectors,
before scoring).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from graphctx.contract import NodeKind
from graphctx.errors import (
    ConfigurationError,
    InvalidDocumentError,
    OperatorError,
    StoreCorruptError,
    StoreUnavailableError,
)
from graphctx.store.candidate_lists import CandidateSearch, QueryVector
from graphctx.store.candidate_search import compose_candidate_search
from graphctx.store.namespace_embedder import EmbedderRecord
from graphctx.store.port import StageTimeout
from graphctx.store.records import (
    ChunkHit,
    ChunkView,
    DocumentDates,
    DocumentSummary,
    DocumentWrite,
    EntityMatch,
    ExpansionPolicy,
    ExpansionResult,
    Expectation,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    NodeText,
    Relation,
    StoredVersion,
    Vector,
    WriteResult,
    page_starts_of,
    text_terms,
)
from graphctx.store.sqlite import fulltext, graph, schema
from graphctx.store.sqlite.ann import AnnSettings, AnnVectors, BuildReport
from graphctx.store.sqlite.namespace_stats import StatsCache
from graphctx.store.sqlite.scope_layout import FullLayouts
from graphctx.store.sqlite.snapshot import one_snapshot
from graphctx.store.sqlite.vectors import VectorCache, top_k_visible
from graphctx.store.sqlite.writes import (
    delete_document_versions,
    latest_stored_version,
    latest_stored_versions,
    stored_embedder,
    write_document_versions,
    write_graph_records,
)
from graphctx.text.lexical import ANALYSER, query_terms

T = TypeVar("T")
PROGRESS_STEPS = 2_000  # SQLite VM steps between deadline checks
PING_TIMEOUT_S = 2.0  # readiness: a store that cannot answer one small read by then is not ready

# SQLite primary result codes (``exc.sqlite_errorcode & 0xFF``) by what the caller should do.
_TRANSIENT = frozenset(
    {
        sqlite3.SQLITE_BUSY,  # another connection or process holds the lock
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_PROTOCOL,  # WAL lock race; SQLite itself says retry
        sqlite3.SQLITE_IOERR,  # a failed read or write of the file; may pass
        sqlite3.SQLITE_NOMEM,
    }
)
_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})

_VIEW_COLUMNS = """
    c.chunk_id, d.document_id, d.version, d.source_uri, d.title, c.text, c.start_char,
    c.end_char, c.ordinal, d.id, d.created_at, d.updated_at, d.valid_from, d.valid_to,
    d.is_latest, d.declared_superseded_by, d.superseded_by_version, d.extra_json
"""


def _scope_clause(scopes: frozenset[str], doc_column: str) -> tuple[str, list[str]]:
    """Documents holding any of ``scopes``, for a namespace-wide read: the visible documents
    are listed once."""
    marks = ", ".join("?" * len(scopes))
    return (
        f"{doc_column} IN (SELECT doc FROM document_scopes WHERE scope IN ({marks}))",
        sorted(scopes),
    )


def _scope_check(scopes: frozenset[str], doc_column: str) -> tuple[str, list[str]]:
    """The same condition, for a read of a few chunks by id: each row's document is looked up
    in the scope index. (The list above holds every visible document of the store: at 100k
    chunks it took ~10 ms to build for each fetch of 50 chunks.)"""
    marks = ", ".join("?" * len(scopes))
    return (
        f"EXISTS (SELECT 1 FROM document_scopes ds WHERE ds.doc = {doc_column}"
        f" AND ds.scope IN ({marks}))",
        sorted(scopes),
    )


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class SqliteGraphStore:
    """The embedded store. ``path`` is the database file; it is created on ``open()``.

    ``ann``: also keep an approximate vector index per large namespace (:mod:`.ann`, the
    ``ann`` extra); without it every vector search is the exact scan."""

    name = "sqlite"

    def __init__(self, path: Path, *, ann: AnnSettings | None = None) -> None:
        self.path = path
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._readers: list[sqlite3.Connection] = []
        self._reading: set[sqlite3.Connection] = set()  # readers inside a read right now
        self._readers_lock = threading.Lock()
        self._layouts = FullLayouts()  # both caches rebuild from the same layout
        self._vectors = VectorCache(self._layouts)
        self._ann = None if ann is None else AnnVectors(ann)
        self._stats = StatsCache(self._layouts)
        self._opened = False
        self._own_analyser = False  # set on open

    # --- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        await asyncio.to_thread(self._open_sync)

    def _open_sync(self) -> None:
        if self._opened:
            return
        if not self.path.parent.is_dir():
            raise StoreUnavailableError(
                f"directory {self.path.parent} does not exist",
                retryable=False,
                code="store_missing",
            )
        try:
            writer = schema.connect(self.path, read_only=False)
        except (StoreUnavailableError, StoreCorruptError) as exc:
            raise _reclassified(exc) from exc.__cause__
        try:
            schema.initialise(writer, self.path)
        except (StoreUnavailableError, StoreCorruptError) as exc:
            writer.close()
            raise _reclassified(exc) from exc.__cause__
        except Exception:
            writer.close()
            raise
        # A file created by an older graphctx may hold terms of an older analyser.
        self._own_analyser = writer.execute(
            "SELECT value FROM meta WHERE key = 'analyser'"
        ).fetchone() == (ANALYSER,)
        self._writer = writer
        self._opened = True

    async def close(self) -> None:
        with self._readers_lock:
            # A read abandoned at its deadline may still run on its thread: closing its
            # connection under it crashes the process, so that thread closes it when done.
            for conn in self._readers:
                if conn not in self._reading:
                    conn.close()
            self._readers.clear()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._local = threading.local()
        self._vectors.clear()
        self._layouts.clear()
        if self._ann is not None:
            self._ann.clear()
        self._stats.clear()
        self._opened = False

    async def ping(self) -> None:
        """Read the schema version: touches the file, so a lock, a damaged or replaced file
        shows here (``SELECT 1`` would not read the database at all)."""
        deadline = time.monotonic() + PING_TIMEOUT_S
        try:
            await self._read(
                lambda conn: conn.execute(
                    "SELECT value FROM meta WHERE key = 'schema_version'"
                ).fetchone(),
                deadline,
            )
        except StageTimeout as exc:
            raise StoreUnavailableError(
                f"store did not answer a read within {PING_TIMEOUT_S:g} s"
            ) from exc

    # --- connections -----------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection:
        if not self._opened:
            raise StoreUnavailableError("store is not open")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = schema.connect(self.path, read_only=True)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    async def _read(self, work: Callable[[sqlite3.Connection], T], deadline: float | None) -> T:
        """Run ``work`` on this thread's reader; with a deadline, the query is interrupted
        there (progress handler), lock waits end there (busy timeout), and the caller stops
        waiting there even when the thread is stuck where SQLite cannot see the clock."""

        def run() -> T:
            if deadline is not None and time.monotonic() > deadline:
                raise StageTimeout("deadline passed before the query started")
            conn = self._reader()
            with self._readers_lock:
                self._reading.add(conn)
            try:
                return on(conn)
            finally:
                with self._readers_lock:
                    self._reading.discard(conn)
                    closed_meanwhile = conn not in self._readers
                if closed_meanwhile:  # the store was closed during this read
                    conn.close()

        def on(conn: sqlite3.Connection) -> T:
            busy_ms = schema.BUSY_TIMEOUT_MS
            if deadline is not None:
                busy_ms = max(1, min(busy_ms, int((deadline - time.monotonic()) * 1000)))
                conn.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)
            try:
                conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
                with one_snapshot(conn):
                    return work(conn)
            except sqlite3.Error as exc:
                if _error_code(exc) == sqlite3.SQLITE_INTERRUPT:
                    raise StageTimeout("store query interrupted at the deadline") from exc
                raise store_error(exc, "read") from exc
            finally:
                conn.set_progress_handler(None, 0)

        if deadline is None:
            return await asyncio.to_thread(run)
        try:
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                return await asyncio.to_thread(run)
        except TimeoutError as exc:
            raise StageTimeout("store read abandoned at the deadline") from exc

    async def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            if self._writer is None:
                raise StoreUnavailableError("store is not open")
            with self._write_lock:
                conn = self._writer
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    result = work(conn)
                    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
                    conn.execute("COMMIT")
                    return result
                except BaseException as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if isinstance(exc, sqlite3.Error):
                        raise store_error(exc, "write") from exc
                    raise

        return await asyncio.to_thread(run)

    # --- write path ------------------------------------------------------------------------
    async def latest_version(self, namespace: str, document_id: str) -> StoredVersion | None:
        return await self._read(
            lambda conn: latest_stored_version(conn, namespace, document_id), None
        )

    async def latest_versions(
        self, namespace: str, document_ids: Sequence[str]
    ) -> dict[str, StoredVersion]:
        ids = list(dict.fromkeys(document_ids))
        return await self._read(lambda conn: latest_stored_versions(conn, namespace, ids), None)

    async def namespace_embedder(self, namespace: str) -> EmbedderRecord | None:
        return await self._read(lambda conn: stored_embedder(conn, namespace), None)

    async def write_document(
        self,
        document: NewDocument,
        chunks: Sequence[NewChunk],
        embedder_name: str,
        *,
        expected: Expectation | None = None,
    ) -> WriteResult:
        write = DocumentWrite(document, tuple(chunks), expected)
        (result,) = await self.write_documents(document.namespace, [write], embedder_name)
        if isinstance(result, InvalidDocumentError):
            raise result
        return result

    async def write_documents(
        self, namespace: str, writes: Sequence[DocumentWrite], embedder_name: str
    ) -> list[WriteResult | InvalidDocumentError]:
        if not writes:
            return []
        return await self._write(
            lambda conn: write_document_versions(conn, namespace, writes, embedder_name)
        )

    async def delete_document(
        self, namespace: str, document_id: str, *, expected: Expectation | None = None
    ) -> int:
        return await self._write(
            lambda conn: delete_document_versions(conn, namespace, document_id, expected)
        )

    async def write_graph(
        self, namespace: str, nodes: Sequence[KnowledgeNode], relations: Sequence[Relation]
    ) -> None:
        await self._write(lambda conn: write_graph_records(conn, namespace, nodes, relations))

    # --- read path -------------------------------------------------------------------------
    async def fulltext_search(
        self, namespace: str, query: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        terms = query_terms(query)
        if not terms or not scopes:
            return []

        def work(conn: sqlite3.Connection) -> list[ChunkHit]:
            stats = self._stats.stats_for(conn, namespace, _generation(conn))
            rows = fulltext.search(conn, stats, namespace, terms, scopes, limit)
            return [ChunkHit(chunk_id, score) for chunk_id, score in rows]

        return await self._read(work, deadline)

    async def vector_search(
        self, namespace: str, vector: Vector, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        if not scopes:
            return []

        def work(conn: sqlite3.Connection) -> list[ChunkHit]:
            # A (re)load of the namespace's matrix is not interrupted at this request's
            # deadline: at 1M chunks it takes longer than a request's stage budget, and a load
            # abandoned by every request would never be cached. The request stops waiting at
            # its deadline (``_read``); the load finishes in its thread for the next one.
            conn.set_progress_handler(None, 0)
            data = self._vectors.matrix_for(conn, namespace, _generation(conn))
            if data.dim and data.dim != vector.shape[0]:
                raise ConfigurationError(
                    f"query vector has dimension {vector.shape[0]} but namespace {namespace!r}"
                    f" stores {data.dim}: use the embedder it was ingested with"
                )
            if time.monotonic() > deadline:
                raise StageTimeout("vector search passed its deadline")
            best = None
            if self._ann is not None:
                best = self._ann.top_k(conn, namespace, data, vector, scopes, limit)
            if best is None:
                best = top_k_visible(data, vector, scopes, limit)
            ids = _chunk_ids(conn, [rowid for rowid, _ in best])
            return [ChunkHit(ids[rowid], score) for rowid, score in best]

        return await self._read(work, deadline)

    async def build_vector_index(self, namespace: str) -> BuildReport:
        """Build ``namespace``'s approximate index now (a store opened with ``ann``); else
        its first large search starts the build and the exact scan answers until it ends."""
        ann = self._ann
        if ann is None:
            raise ConfigurationError("the store was opened without an approximate index (ann=)")

        def work(conn: sqlite3.Connection) -> BuildReport:
            return ann.build(
                namespace, self._vectors.matrix_for(conn, namespace, _generation(conn))
            )

        return await self._read(work, None)

    async def search_candidates(
        self,
        namespace: str,
        query: str | None,
        query_vector: QueryVector | None,
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> CandidateSearch:
        """The two searches side by side (no round trips to save in-process)."""
        return await compose_candidate_search(
            self, namespace, query, query_vector, scopes, limit, deadline
        )

    async def fetch_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[ChunkView]:
        if not chunk_ids or not scopes:
            return []
        clause, params = _scope_check(scopes, "d.id")
        id_marks = ", ".join("?" * len(chunk_ids))

        def work(conn: sqlite3.Connection) -> list[ChunkView]:
            # Each chunk's text terms come with it when this file's analyser is ours.
            table = fulltext.table_of(conn, namespace) if self._own_analyser else None
            sql = f"""
                SELECT {_VIEW_COLUMNS}{", c.heading_path, f.terms" if table else ""}
                FROM chunks c JOIN documents d ON d.id = c.doc
                {f"LEFT JOIN {table} f ON f.rowid = c.id" if table else ""}
                WHERE c.namespace = ? AND c.chunk_id IN ({id_marks}) AND {clause}
            """
            rows = conn.execute(sql, [namespace, *chunk_ids, *params]).fetchall()
            scope_map = _scopes_of(conn, {row[9] for row in rows})
            views = {row[0]: _view(row, scope_map[row[9]]) for row in rows}
            return [views[cid] for cid in chunk_ids if cid in views]

        return await self._read(work, deadline)

    async def list_documents(self, namespace: str, scopes: frozenset[str]) -> list[DocumentSummary]:
        if not scopes:
            return []
        clause, params = _scope_clause(scopes, "d.id")
        sql = f"""
            SELECT d.document_id, d.version, d.source_uri, d.title,
                   (SELECT count(*) FROM chunks c WHERE c.doc = d.id),
                   d.is_latest = 0 OR d.declared_superseded_by IS NOT NULL
            FROM documents d WHERE d.namespace = ? AND {clause}
            ORDER BY d.document_id, d.version_seq
        """

        def work(conn: sqlite3.Connection) -> list[DocumentSummary]:
            rows = conn.execute(sql, [namespace, *params]).fetchall()
            return [DocumentSummary(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

        return await self._read(work, None)

    async def nodes_for_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[KnowledgeNode]:
        if not chunk_ids or not scopes:
            return []
        clause, params = _scope_check(scopes, "c.doc")
        id_marks = ", ".join("?" * len(chunk_ids))
        sql = f"""
            SELECT n.node_id, n.kind, c.chunk_id
            FROM node_support s
            JOIN chunks c ON c.id = s.chunk
            JOIN nodes n ON n.namespace = s.namespace AND n.node_id = s.node_id
            WHERE s.namespace = ? AND c.chunk_id IN ({id_marks}) AND {clause}
            ORDER BY n.node_id, c.chunk_id
        """

        def work(conn: sqlite3.Connection) -> list[KnowledgeNode]:
            support: dict[str, list[str]] = {}
            kinds: dict[str, str] = {}
            for node_id, kind, chunk_id in conn.execute(sql, [namespace, *chunk_ids, *params]):
                support.setdefault(node_id, []).append(chunk_id)
                kinds[node_id] = kind
            texts = {t.node_id: t for t in graph.describe_nodes(conn, namespace, [*kinds], scopes)}
            # Only visible nodes (a mention does not show a node whose home is hidden). Derived
            # text rule: the name is shown only when every supporting document is visible,
            # otherwise the node is named by its id; the type only through visible support.
            return [
                KnowledgeNode(
                    node_id,
                    NodeKind(kinds[node_id]),
                    texts[node_id].name or node_id,
                    tuple(chunks),
                    None,
                    node_type=texts[node_id].node_type,
                )
                for node_id, chunks in support.items()
                if node_id in texts
            ]

        return await self._read(work, deadline)

    # --- graph layer -----------------------------------------------------------------------
    async def expand(
        self,
        namespace: str,
        anchors: Mapping[str, float],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        if not anchors or not scopes:
            return ExpansionResult(())
        return await self._read(
            lambda conn: graph.expand(conn, namespace, anchors, scopes, policy, deadline),
            deadline,
        )

    async def neighbourhood(
        self,
        namespace: str,
        node_ids: Sequence[str],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        if not node_ids or not scopes:
            return ExpansionResult(())
        return await self._read(
            lambda conn: graph.neighbourhood(conn, namespace, node_ids, scopes, policy, deadline),
            deadline,
        )

    async def lookup_entities(
        self,
        namespace: str,
        keys: Sequence[str],
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> list[EntityMatch]:
        return await self._read(
            lambda conn: graph.lookup_entities(conn, namespace, keys, scopes, limit), deadline
        )

    async def describe_nodes(
        self, namespace: str, node_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[NodeText]:
        return await self._read(
            lambda conn: graph.describe_nodes(conn, namespace, node_ids, scopes), deadline
        )

    async def document_chunks(self, namespace: str, document_id: str) -> list[ChunkView]:
        sql = f"""
            SELECT {_VIEW_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc
            WHERE d.namespace = ? AND d.document_id = ? AND d.is_latest = 1
            ORDER BY c.ordinal
        """

        def work(conn: sqlite3.Connection) -> list[ChunkView]:
            rows = conn.execute(sql, (namespace, document_id)).fetchall()
            scope_map = _scopes_of(conn, {row[9] for row in rows})
            return [_view(row, scope_map[row[9]]) for row in rows]

        return await self._read(work, None)


# --- error mapping -----------------------------------------------------------------------
def _error_code(exc: sqlite3.Error) -> int:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else sqlite3.SQLITE_ERROR


def store_error(exc: sqlite3.Error, action: str) -> OperatorError:
    """The typed error for an SQLite failure, by result code (never by message text).

    Busy/locked and I/O errors are retryable StoreUnavailableError; a file that is not a
    database or is malformed is StoreCorruptError (retrying cannot help); anything else
    (cannot open, read-only, disk full, an unexpected SQL error) needs an operator:
    StoreUnavailableError with ``retryable`` false.
    """
    code = _error_code(exc)
    message = f"store {action} failed: {exc}"
    if code in _DAMAGED:
        return StoreCorruptError(message)
    return StoreUnavailableError(message, retryable=code in _TRANSIENT)


def _reclassified(exc: StoreUnavailableError | StoreCorruptError) -> OperatorError:
    """Open-time errors from :mod:`schema` again, classified by result code.

    ``schema`` maps every OperationalError to unavailable and every other DatabaseError to
    corrupt, so a locked file ("database is locked" is a DatabaseError there) could read as
    corrupt; the code on the original SQLite error decides instead.
    """
    cause = exc.__cause__
    if not isinstance(cause, sqlite3.Error):
        return exc
    return store_error(cause, "open")


# --- helpers running inside a connection --------------------------------------------------
def _generation(conn: sqlite3.Connection) -> int:
    """The store's write generation as of ``conn``'s read transaction."""
    return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])


def _chunk_ids(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
    if not rowids:
        return {}
    marks = ", ".join("?" * len(rowids))
    rows = conn.execute(f"SELECT id, chunk_id FROM chunks WHERE id IN ({marks})", list(rowids))
    return dict(rows.fetchall())


def _scopes_of(conn: sqlite3.Connection, docs: set[int]) -> dict[int, frozenset[str]]:
    if not docs:
        return {}
    marks = ", ".join("?" * len(docs))
    found: dict[int, set[str]] = {doc: set() for doc in docs}
    for scope, doc in conn.execute(
        f"SELECT scope, doc FROM document_scopes WHERE doc IN ({marks})", sorted(docs)
    ):
        found[doc].add(scope)
    return {doc: frozenset(scopes) for doc, scopes in found.items()}


def _view(row: tuple[object, ...], scopes: frozenset[str]) -> ChunkView:
    (
        chunk_id,
        document_id,
        version,
        source_uri,
        title,
        text,
        start,
        end,
        ordinal,
        _doc,
        created,
        updated,
        valid_from,
        valid_to,
        is_latest,
        declared,
        _superseded_by_version,
        extra_json,
        *indexed,  # heading path (JSON) and stored terms, when read
    ) = row
    terms = None
    if indexed and isinstance(indexed[1], str):
        terms = text_terms(
            indexed[1], json.loads(str(indexed[0])), None if title is None else str(title)
        )
    return ChunkView(
        chunk_id=str(chunk_id),
        document_id=str(document_id),
        document_version=str(version),
        source_uri=str(source_uri),
        title=None if title is None else str(title),
        text=str(text),
        start_char=int(start),  # type: ignore[call-overload]
        end_char=int(end),  # type: ignore[call-overload]
        ordinal=int(ordinal),  # type: ignore[call-overload]
        scopes=scopes,
        dates=DocumentDates(
            _parse(created),  # type: ignore[arg-type]
            _parse(updated),  # type: ignore[arg-type]
            _parse(valid_from),  # type: ignore[arg-type]
            _parse(valid_to),  # type: ignore[arg-type]
        ),
        superseded=not is_latest or declared is not None,
        superseded_by=None if declared is None else str(declared),
        page_starts=page_starts_of(extra_json),
        text_terms=terms,
    )
