"""Neo4jGraphStore: the GraphStore port on a Neo4j server (2026.01 or newer).

Two drivers, two paths. Reads use the read driver only, always in a READ access-mode
transaction whose server-side timeout is the time left until the caller's deadline, inside a
client-side ``asyncio.timeout`` of the same budget plus a small grace, so a hung connection
cannot hold a request either. Writes use a separate driver (its credentials may differ) in
managed write transactions, one per document; a write takes a lock on its ``Namespace`` node,
so writers of a namespace are serialised as in the embedded store.

Semantics mirror :class:`graphctx.store.sqlite.store.SqliteGraphStore` exactly; how scopes
become index filters is described in :mod:`graphctx.store.neo4j.acl`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

import numpy as np

import neo4j
import neo4j.exceptions as neo4j_errors
from graphctx.contract import NodeKind
from graphctx.errors import (
    ConfigurationError,
    GraphctxError,
    InvalidRequestError,
    StoreUnavailableError,
)
from graphctx.store.neo4j import acl, graph, queries
from graphctx.store.neo4j.schema import SchemaReport, check_server_version, init_schema
from graphctx.store.port import StageTimeout
from graphctx.store.records import (
    ChunkHit,
    ChunkView,
    DocumentDates,
    DocumentSummary,
    EntityMatch,
    ExpansionPolicy,
    ExpansionResult,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    NodeText,
    Relation,
    StoredVersion,
    Vector,
    WriteOutcome,
    WriteResult,
    name_key,
)
from graphctx.store.sqlite.lexical import index_terms

T = TypeVar("T")
Auth = tuple[str, str]
ReadWork = Callable[[neo4j.AsyncTransaction], Awaitable[T]]
WriteWork = Callable[[neo4j.AsyncManagedTransaction], Awaitable[T]]

DEFAULT_READ_TIMEOUT_S = 30.0  # reads without a caller deadline (listing, version lookups)
# The server checks transaction timeouts periodically (``db.transaction.monitor.check.interval``,
# 2 s by default), so the client stops waiting this long after the deadline in any case.
CLIENT_GRACE_S = 0.25
MIN_TX_TIMEOUT_S = 0.001  # a timeout of 0 would mean "no timeout" to the server
CONNECT_TIMEOUT_S = 5.0
CHUNK_BATCH = 500  # chunks per UNWIND statement
EXACT_SEARCH_MAX_CHUNKS = 1_000  # AUTO: exact cosine up to this many visible chunks (README)
IN_INDEX_CANDIDATES_FACTOR = 2  # in-index search fetches limit x this, then re-ranks
TX_METADATA: Mapping[str, str] = {"app": "graphctx"}
_TIMEOUT_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    }
)
_MISSING_INDEX_CODES = frozenset(
    {"Neo.ClientError.Schema.IndexNotFound", "Neo.ClientError.Procedure.ProcedureCallFailed"}
)
_ACCESS_MODE_CODE = "Neo.ClientError.Statement.AccessMode"


class VectorStrategy(StrEnum):
    """How vector search applies scopes. Both are strict; they trade recall for latency."""

    AUTO = "auto"  # EXACT up to ``exact_max_chunks`` visible chunks, IN_INDEX beyond
    EXACT = "exact"  # cosine over the pre-filtered visible chunks: 100% recall
    IN_INDEX = "in_index"  # HNSW with the scope filter inside the index (SEARCH ... WHERE)


def _unavailable(message: str, *, retryable: bool) -> StoreUnavailableError:
    error = StoreUnavailableError(message)
    error.retryable = retryable
    return error


def _wrap(exc: Exception, action: str) -> GraphctxError | StageTimeout:
    """Turn a driver error into the graphctx error the caller must react to."""
    if isinstance(exc, neo4j_errors.Neo4jError):
        code = exc.code or ""
        if code in _TIMEOUT_CODES:
            return StageTimeout(f"{action} passed its deadline on the server")
        if code == _ACCESS_MODE_CODE:
            return InvalidRequestError(
                f"{action}: the server refused a write in a read-only transaction",
                code="read_only_violation",
            )
        if code in _MISSING_INDEX_CODES and "index" in str(exc.message).lower():
            return ConfigurationError(
                f"{action}: a graphctx index is missing; run `graphctx neo4j init`"
            )
        if code.startswith("Neo.ClientError.Security."):
            return _unavailable(
                f"{action}: Neo4j refused the credentials ({code})", retryable=False
            )
        return _unavailable(f"{action} failed: {code}: {exc.message}", retryable=exc.is_retryable())
    if isinstance(exc, neo4j_errors.ConfigurationError | ValueError):
        return ConfigurationError(f"{action}: invalid Neo4j settings: {exc}")
    return _unavailable(f"{action}: Neo4j is unreachable: {exc}", retryable=True)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _parse(value: object) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def _version_label(document: NewDocument, previous: StoredVersion | None) -> str:
    digest = f"sha256:{document.content_hash[:12]}"
    if document.source_version is None:
        return digest
    if previous is not None and previous.version == document.source_version:
        return f"{document.source_version}+{digest}"
    return document.source_version


def _chunk_row(
    document: NewDocument, version_seq: int, chunk: NewChunk, seq: int
) -> dict[str, Any]:
    if document.text[chunk.start_char : chunk.end_char] != chunk.text:
        raise ValueError(f"chunk {chunk.ordinal} of {document.document_id} does not match its span")
    embedding = np.asarray(chunk.embedding, dtype=np.float32).astype(np.float64)
    return {
        "namespace": document.namespace,
        "chunk_id": f"{document.document_id}@{version_seq}#{chunk.ordinal}",
        "seq": seq,
        "ordinal": chunk.ordinal,
        "start_char": chunk.start_char,
        "end_char": chunk.end_char,
        "text": chunk.text,
        "heading_path": list(chunk.heading_path),
        "embedding": embedding.tolist(),
        "terms": index_terms(" ".join([*chunk.heading_path, document.title or "", chunk.text])),
        "acl_key": acl.scope_set_key(document.namespace, document.scopes),
        "acl_terms": acl.acl_terms(document.namespace, document.scopes),
    }


def _document_properties(document: NewDocument, version: str, seq: int) -> dict[str, Any]:
    return {
        "namespace": document.namespace,
        "document_id": document.document_id,
        "version": version,
        "version_seq": seq,
        "content_hash": document.content_hash,
        "metadata_hash": document.metadata_hash,
        "source_uri": document.source_uri,
        "title": document.title,
        "media_type": document.media_type,
        "text": document.text,
        "created_at": _iso(document.dates.created_at),
        "updated_at": _iso(document.dates.updated_at),
        "valid_from": _iso(document.dates.valid_from),
        "valid_to": _iso(document.dates.valid_to),
        "declared_superseded_by": document.declared_superseded_by,
        "ingested_at": datetime.now(UTC).isoformat(),
        "extra_json": json.dumps(dict(document.extra), sort_keys=True, ensure_ascii=False),
        "is_latest": True,
        "scopes": sorted(document.scopes),
        "acl_key": acl.scope_set_key(document.namespace, document.scopes),
    }


def _view(row: Mapping[str, Any]) -> ChunkView:
    declared = row["declared_superseded_by"]
    return ChunkView(
        chunk_id=str(row["chunk_id"]),
        document_id=str(row["document_id"]),
        document_version=str(row["version"]),
        source_uri=str(row["source_uri"]),
        title=None if row["title"] is None else str(row["title"]),
        text=str(row["text"]),
        start_char=int(row["start_char"]),
        end_char=int(row["end_char"]),
        ordinal=int(row["ordinal"]),
        scopes=frozenset(str(scope) for scope in row["scopes"]),
        dates=DocumentDates(
            _parse(row["created_at"]),
            _parse(row["updated_at"]),
            _parse(row["valid_from"]),
            _parse(row["valid_to"]),
        ),
        superseded=not row["is_latest"] or declared is not None,
        superseded_by=None if declared is None else str(declared),
    )


async def _rows(
    tx: neo4j.AsyncTransaction | neo4j.AsyncManagedTransaction, query: str, **params: Any
) -> list[dict[str, Any]]:
    result = await tx.run(query, params)
    return [record.data() async for record in result]


async def _one(
    tx: neo4j.AsyncTransaction | neo4j.AsyncManagedTransaction, query: str, **params: Any
) -> dict[str, Any] | None:
    rows = await _rows(tx, query, **params)
    return rows[0] if rows else None


class Neo4jGraphStore:
    """The Neo4j store. The constructor does no I/O; ``open()`` connects and checks the server.

    ``auth`` is used by the read path; ``write_auth`` (default: ``auth``) by the write path,
    so retrieval can run under a user that is not allowed to write (Enterprise) or against a
    read-only database, while ingest uses a different user.
    """

    name = "neo4j"

    def __init__(
        self,
        uri: str,
        auth: Auth,
        database: str = "neo4j",
        *,
        write_auth: Auth | None = None,
        vector_strategy: VectorStrategy = VectorStrategy.AUTO,
        exact_max_chunks: int = EXACT_SEARCH_MAX_CHUNKS,
        ensure_schema_on_write: bool = True,
    ) -> None:
        self.uri = uri
        self.database = database
        self.vector_strategy = vector_strategy
        self.exact_max_chunks = exact_max_chunks
        self.ensure_schema_on_write = ensure_schema_on_write
        self.client_grace_s = CLIENT_GRACE_S
        self.server_version: str | None = None
        self.schema: SchemaReport | None = None
        self._auth = auth
        self._write_auth = write_auth or auth
        self._reader: neo4j.AsyncDriver | None = None
        self._writer: neo4j.AsyncDriver | None = None
        self._schema_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"Neo4jGraphStore({self.uri!r}, database={self.database!r})"

    # --- lifecycle -------------------------------------------------------------------------
    def _driver(self, auth: Auth) -> neo4j.AsyncDriver:
        return neo4j.AsyncGraphDatabase.driver(
            self.uri,
            auth=auth,
            connection_timeout=CONNECT_TIMEOUT_S,
            notifications_min_severity="OFF",
            user_agent="graphctx",
        )

    async def open(self) -> None:
        if self._reader is not None:
            return
        try:
            reader = self._driver(self._auth)
            writer = self._driver(self._write_auth)
        except (neo4j_errors.ConfigurationError, ValueError) as exc:
            raise ConfigurationError(f"invalid Neo4j location {self.uri!r}: {exc}") from exc
        self._reader, self._writer = reader, writer
        try:
            await reader.verify_connectivity()
            row = await self._read(lambda tx: _one(tx, queries.SERVER_COMPONENTS), None)
            if row is None:
                raise StoreUnavailableError("the server did not report its version")
            check_server_version(str(row["version"]))
            self.server_version = str(row["version"])
        except BaseException as exc:
            await self.close()
            if isinstance(exc, neo4j_errors.Neo4jError | neo4j_errors.DriverError | OSError):
                raise _wrap(exc, f"opening {self.uri}") from exc
            raise

    async def close(self) -> None:
        reader, writer = self._reader, self._writer
        self._reader = self._writer = None
        for driver in (reader, writer):
            if driver is not None:
                await driver.close()

    async def ping(self) -> None:
        await self._read(lambda tx: _one(tx, queries.PING), None)

    async def init_schema(self) -> SchemaReport:
        """Create constraints and indexes on the write path (``graphctx neo4j init``)."""
        writer = self._require(self._writer)
        try:
            self.schema = await init_schema(writer, self.database)
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
            raise _wrap(exc, "creating the graphctx schema") from exc
        return self.schema

    def _require(self, driver: neo4j.AsyncDriver | None) -> neo4j.AsyncDriver:
        if driver is None:
            raise StoreUnavailableError("store is not open")
        return driver

    # --- transactions ----------------------------------------------------------------------
    async def _read(self, work: ReadWork[T], deadline: float | None, action: str = "read") -> T:
        """Run ``work`` in one READ transaction bounded by ``deadline`` on both sides."""
        reader = self._require(self._reader)
        budget = DEFAULT_READ_TIMEOUT_S if deadline is None else deadline - time.monotonic()
        if budget <= 0:
            raise StageTimeout(f"{action}: the deadline passed before the query started")
        try:
            async with asyncio.timeout(budget + self.client_grace_s):
                async with reader.session(
                    database=self.database, default_access_mode=neo4j.READ_ACCESS
                ) as session:
                    tx = await session.begin_transaction(
                        metadata=dict(TX_METADATA), timeout=max(budget, MIN_TX_TIMEOUT_S)
                    )
                    async with tx:
                        return await work(tx)
        except TimeoutError as exc:
            raise StageTimeout(f"{action} passed its deadline") from exc
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
            raise _wrap(exc, action) from exc

    async def _write(self, work: WriteWork[T], action: str) -> T:
        """Run ``work`` in one managed write transaction (retried on transient errors)."""
        writer = self._require(self._writer)
        if self.ensure_schema_on_write and self.schema is None:
            async with self._schema_lock:
                if self.schema is None:
                    await self.init_schema()
        try:
            async with writer.session(
                database=self.database, default_access_mode=neo4j.WRITE_ACCESS
            ) as session:
                return await session.execute_write(work)
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
            raise _wrap(exc, action) from exc

    async def run_read(
        self, query: str, parameters: Mapping[str, Any], deadline: float
    ) -> list[dict[str, Any]]:
        """Run one statement on the retrieval path: READ access mode, deadline-bound.

        The server refuses writes here (``InvalidRequestError`` code ``read_only_violation``).
        This is the only way to run Cypher that graphctx did not write; guard it above.
        """
        return await self._read(lambda tx: _rows(tx, query, **parameters), deadline, "query")

    # --- write path ------------------------------------------------------------------------
    async def latest_version(self, namespace: str, document_id: str) -> StoredVersion | None:
        async def work(tx: neo4j.AsyncTransaction) -> StoredVersion | None:
            row = await _one(
                tx, queries.LATEST_VERSION, namespace=namespace, document_id=document_id
            )
            return _stored_version(document_id, None if row is None else row["latest"])

        return await self._read(work, None, "latest version")

    async def write_document(
        self, document: NewDocument, chunks: Sequence[NewChunk], embedder_name: str
    ) -> WriteResult:
        async def work(tx: neo4j.AsyncManagedTransaction) -> WriteResult:
            return await _write_document(tx, document, chunks, embedder_name)

        return await self._write(work, f"writing {document.document_id}")

    async def delete_document(self, namespace: str, document_id: str) -> int:
        async def work(tx: neo4j.AsyncManagedTransaction) -> int:
            return await _delete_document(tx, namespace, document_id)

        return await self._write(work, f"deleting {document_id}")

    async def write_graph(
        self, namespace: str, nodes: Sequence[KnowledgeNode], relations: Sequence[Relation]
    ) -> None:
        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            await _write_graph(tx, namespace, nodes, relations)

        await self._write(work, "writing graph")

    # --- read path -------------------------------------------------------------------------
    async def fulltext_search(
        self, namespace: str, query: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        lucene = acl.lucene_query(namespace, query, scopes)
        if lucene is None or limit <= 0:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[ChunkHit]:
            rows = await _rows(
                tx,
                queries.FULLTEXT_SEARCH,
                lucene=lucene,
                limit=limit,
                namespace=namespace,
                scopes=sorted(scopes),
            )
            return [ChunkHit(str(row["chunk_id"]), float(row["score"])) for row in rows]

        return await self._read(work, deadline, "fulltext search")

    async def vector_search(
        self, namespace: str, vector: Vector, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        if not scopes or limit <= 0:
            return []
        query_vector = np.asarray(vector, dtype=np.float32).astype(np.float64).tolist()

        async def work(tx: neo4j.AsyncTransaction) -> list[ChunkHit]:
            plan = await _one(tx, queries.VECTOR_PLAN, namespace=namespace, scopes=sorted(scopes))
            if plan is None or plan["dimension"] is None or not plan["keys"]:
                return []
            if int(plan["dimension"]) != len(query_vector):
                raise ConfigurationError(
                    f"query vector has dimension {len(query_vector)} but namespace {namespace!r}"
                    f" stores {plan['dimension']}: use the embedder it was ingested with"
                )
            strategy = self._vector_strategy_for(int(plan["visible"] or 0))
            if strategy is VectorStrategy.EXACT:
                rows = await _rows(
                    tx,
                    queries.VECTOR_SEARCH_EXACT,
                    keys=plan["keys"],
                    vector=query_vector,
                    limit=limit,
                    scopes=sorted(scopes),
                )
            else:
                rows = await _rows(
                    tx,
                    queries.VECTOR_SEARCH_IN_INDEX,
                    keys=plan["keys"],
                    vector=query_vector,
                    limit=limit,
                    scopes=sorted(scopes),
                    candidates=limit * IN_INDEX_CANDIDATES_FACTOR,
                )
            # Neo4j reports cosine as (1 + cos) / 2; the port speaks plain cosine.
            return [ChunkHit(str(row["chunk_id"]), 2.0 * float(row["score"]) - 1.0) for row in rows]

        return await self._read(work, deadline, "vector search")

    def _vector_strategy_for(self, visible_chunks: int) -> VectorStrategy:
        if self.vector_strategy is not VectorStrategy.AUTO:
            return self.vector_strategy
        if visible_chunks <= self.exact_max_chunks:
            return VectorStrategy.EXACT
        return VectorStrategy.IN_INDEX

    async def fetch_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[ChunkView]:
        if not chunk_ids or not scopes:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[ChunkView]:
            rows = await _rows(
                tx,
                queries.FETCH_CHUNKS,
                namespace=namespace,
                chunk_ids=list(dict.fromkeys(chunk_ids)),
                scopes=sorted(scopes),
            )
            views = {str(row["chunk_id"]): _view(row) for row in rows}
            return [views[cid] for cid in chunk_ids if cid in views]

        return await self._read(work, deadline, "fetch chunks")

    async def list_documents(self, namespace: str, scopes: frozenset[str]) -> list[DocumentSummary]:
        if not scopes:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[DocumentSummary]:
            rows = await _rows(
                tx, queries.LIST_DOCUMENTS, namespace=namespace, scopes=sorted(scopes)
            )
            return [
                DocumentSummary(
                    str(r["document_id"]),
                    str(r["version"]),
                    str(r["source_uri"]),
                    None if r["title"] is None else str(r["title"]),
                    int(r["chunk_count"]),
                    bool(r["superseded"]),
                )
                for r in rows
            ]

        return await self._read(work, None, "list documents")

    async def nodes_for_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[KnowledgeNode]:
        if not chunk_ids or not scopes:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[KnowledgeNode]:
            rows = await _rows(
                tx,
                queries.NODES_FOR_CHUNKS,
                namespace=namespace,
                chunk_ids=list(dict.fromkeys(chunk_ids)),
                scopes=sorted(scopes),
            )
            support: dict[str, list[str]] = {}
            info: dict[str, tuple[str, str | None]] = {}
            for row in rows:
                node_id = str(row["node_id"])
                support.setdefault(node_id, []).append(str(row["chunk_id"]))
                node_type = None if row["node_type"] is None else str(row["node_type"])
                info[node_id] = (str(row["kind"]), node_type)
            texts = {
                t.node_id: t for t in await graph.describe_nodes(tx, namespace, [*info], scopes)
            }
            # Derived text rule: the name is shown only when every supporting document is
            # visible; otherwise the node is named by its id. The description never is.
            return [
                KnowledgeNode(
                    node_id,
                    NodeKind(info[node_id][0]),
                    (texts[node_id].name or node_id) if node_id in texts else node_id,
                    tuple(chunks),
                    None,
                    node_type=info[node_id][1],
                )
                for node_id, chunks in support.items()
            ]

        return await self._read(work, deadline, "nodes for chunks")

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

        async def work(tx: neo4j.AsyncTransaction) -> ExpansionResult:
            return await graph.expand(tx, namespace, anchors, scopes, policy, deadline)

        return await self._read(work, deadline, "graph expansion")

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

        async def work(tx: neo4j.AsyncTransaction) -> ExpansionResult:
            return await graph.neighbourhood(tx, namespace, node_ids, scopes, policy, deadline)

        return await self._read(work, deadline, "neighbourhood")

    async def lookup_entities(
        self,
        namespace: str,
        keys: Sequence[str],
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> list[EntityMatch]:
        if not keys or not scopes:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[EntityMatch]:
            return await graph.lookup_entities(tx, namespace, keys, scopes, limit)

        return await self._read(work, deadline, "entity lookup")

    async def describe_nodes(
        self, namespace: str, node_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[NodeText]:
        if not node_ids or not scopes:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[NodeText]:
            return await graph.describe_nodes(tx, namespace, node_ids, scopes)

        return await self._read(work, deadline, "describe nodes")

    async def document_chunks(self, namespace: str, document_id: str) -> list[ChunkView]:
        async def work(tx: neo4j.AsyncTransaction) -> list[ChunkView]:
            rows = await _rows(
                tx, queries.DOCUMENT_CHUNKS, namespace=namespace, document_id=document_id
            )
            return [_view(row) for row in rows]

        return await self._read(work, None, "document chunks")


# --- transaction bodies ---------------------------------------------------------------------
Tx = neo4j.AsyncTransaction | neo4j.AsyncManagedTransaction


def _stored_version(document_id: str, latest: Mapping[str, Any] | None) -> StoredVersion | None:
    if latest is None:
        return None
    return StoredVersion(
        document_id,
        str(latest["version"]),
        int(latest["version_seq"]),
        str(latest["content_hash"]),
        str(latest["metadata_hash"]),
        frozenset(str(scope) for scope in latest["scopes"]),
    )


async def _adjust_scope_sets(
    tx: neo4j.AsyncManagedTransaction,
    namespace: str,
    deltas: Mapping[str, int],
    scopes_of: Mapping[str, list[str]],
) -> None:
    rows = [
        {"key": key, "chunks": delta, "scopes": scopes_of.get(key)}
        for key, delta in sorted(deltas.items())
        if delta
    ]
    if rows:
        await _rows(tx, queries.ADJUST_SCOPE_SETS, namespace=namespace, deltas=rows)


async def _move_to_scope_set(
    tx: neo4j.AsyncManagedTransaction,
    document: NewDocument,
    footprint: Sequence[Mapping[str, Any]],
    new_chunks: int,
) -> None:
    """Every existing chunk of the document moves to its new scope set; new chunks join it."""
    new_key = acl.scope_set_key(document.namespace, document.scopes)
    deltas: dict[str, int] = {new_key: new_chunks}
    for row in footprint:
        key, count = str(row["key"]), int(row["chunks"])
        deltas[key] = deltas.get(key, 0) - count
        deltas[new_key] += count
    await _adjust_scope_sets(tx, document.namespace, deltas, {new_key: sorted(document.scopes)})


async def _set_scopes(tx: neo4j.AsyncManagedTransaction, document: NewDocument) -> None:
    await _rows(
        tx,
        queries.SET_SCOPES_OF_ALL_VERSIONS,
        namespace=document.namespace,
        document_id=document.document_id,
        scopes=sorted(document.scopes),
        acl_key=acl.scope_set_key(document.namespace, document.scopes),
        acl_terms=acl.acl_terms(document.namespace, document.scopes),
    )


async def _write_document(
    tx: neo4j.AsyncManagedTransaction,
    document: NewDocument,
    chunks: Sequence[NewChunk],
    embedder: str,
) -> WriteResult:
    begin = await _one(
        tx,
        queries.BEGIN_DOCUMENT_WRITE,
        namespace=document.namespace,
        document_id=document.document_id,
    )
    assert begin is not None, "MERGE always returns the namespace row"
    if chunks:
        dimension = int(chunks[0].embedding.shape[0])
        if begin["embedder"] is None:
            await _rows(
                tx,
                queries.SET_NAMESPACE_EMBEDDER,
                namespace=document.namespace,
                embedder=embedder,
                dimension=dimension,
            )
        elif (begin["embedder"], begin["dimension"]) != (embedder, dimension):
            raise ConfigurationError(
                f"namespace {document.namespace!r} was ingested with embedder"
                f" {begin['embedder']} ({begin['dimension']} dims); refusing to mix in"
                f" {embedder} ({dimension} dims)"
            )
    previous = _stored_version(document.document_id, begin["latest"])
    footprint: list[Mapping[str, Any]] = begin["footprint"]
    same_content = previous is not None and (previous.content_hash, previous.metadata_hash) == (
        document.content_hash,
        document.metadata_hash,
    )
    if previous is not None and same_content:
        if previous.scopes == document.scopes:
            return WriteResult(WriteOutcome.UNCHANGED, document.document_id, previous.version, 0)
        await _set_scopes(tx, document)
        await _move_to_scope_set(tx, document, footprint, 0)
        return WriteResult(WriteOutcome.SCOPES_UPDATED, document.document_id, previous.version, 0)
    version = _version_label(document, previous)
    seq = 1 if previous is None else previous.version_seq + 1
    base = int(begin["chunk_seq"])
    rows = [_chunk_row(document, seq, chunk, base + i + 1) for i, chunk in enumerate(chunks)]
    await _rows(
        tx,
        queries.CREATE_VERSION,
        namespace=document.namespace,
        document_id=document.document_id,
        properties=_document_properties(document, version, seq),
    )
    if previous is not None:
        await _set_scopes(tx, document)
    for start in range(0, len(rows), CHUNK_BATCH):
        await _rows(
            tx,
            queries.CREATE_CHUNKS,
            namespace=document.namespace,
            document_id=document.document_id,
            version_seq=seq,
            chunks=rows[start : start + CHUNK_BATCH],
        )
    await _move_to_scope_set(tx, document, footprint, len(rows))
    outcome = WriteOutcome.ADDED if previous is None else WriteOutcome.NEW_VERSION
    return WriteResult(outcome, document.document_id, version, len(rows))


async def _delete_document(
    tx: neo4j.AsyncManagedTransaction, namespace: str, document_id: str
) -> int:
    await _rows(tx, queries.LOCK_EXISTING_NAMESPACE, namespace=namespace)
    footprint = await _one(
        tx, queries.DOCUMENT_FOOTPRINT, namespace=namespace, document_id=document_id
    )
    if footprint is None or int(footprint["versions"]) == 0:
        return 0
    chunk_ids = [str(cid) for cid in footprint["chunk_ids"]]
    await _rows(tx, queries.DELETE_DOCUMENT_VERSIONS, namespace=namespace, document_id=document_id)
    if chunk_ids:
        await _rows(tx, queries.PRUNE_RELATION_SUPPORT, namespace=namespace, chunk_ids=chunk_ids)
    if footprint["node_ids"]:
        await _rows(
            tx,
            queries.DELETE_UNSUPPORTED_NODES,
            namespace=namespace,
            node_ids=footprint["node_ids"],
        )
    deltas: dict[str, int] = {}
    for key in footprint["chunk_keys"]:
        deltas[str(key)] = deltas.get(str(key), 0) - 1
    await _adjust_scope_sets(tx, namespace, deltas, {})
    return int(footprint["versions"])


def _node_row(node: KnowledgeNode) -> dict[str, Any]:
    roles = dict(node.support_roles)
    return {
        "node_id": node.node_id,
        "kind": node.kind.value,
        "name": node.name,
        "description": node.description,
        "node_type": node.node_type,
        "name_keys": sorted({name_key(n) for n in (node.name, *node.aliases)} - {""}),
        "link": node.support_link,
        "support": [
            {"chunk_id": chunk_id, "role": roles.get(chunk_id)}
            for chunk_id in node.supporting_chunk_ids
        ],
    }


async def _write_graph(
    tx: neo4j.AsyncManagedTransaction,
    namespace: str,
    nodes: Sequence[KnowledgeNode],
    relations: Sequence[Relation],
) -> None:
    if not nodes and not relations:
        return
    lock = await _one(tx, queries.LOCK_EXISTING_NAMESPACE, namespace=namespace)
    chunk_ids = sorted(
        {cid for node in nodes for cid in node.supporting_chunk_ids}
        | {cid for rel in relations for cid in rel.supporting_chunk_ids}
    )
    missing = await _one(tx, queries.MISSING_CHUNKS, namespace=namespace, chunk_ids=chunk_ids)
    if lock is None or (missing is not None and missing["missing"]):
        unknown = ", ".join(sorted(chunk_ids if missing is None else missing["missing"])[:5])
        raise ValueError(f"unknown supporting chunk ids: {unknown}")
    endpoints = sorted(
        ({rel.source_id for rel in relations} | {rel.target_id for rel in relations})
        - {node.node_id for node in nodes}
    )
    absent = await _one(tx, queries.MISSING_NODES, namespace=namespace, node_ids=endpoints)
    if absent is not None and absent["missing"]:
        unknown = ", ".join(sorted(absent["missing"])[:5])
        raise ValueError(f"unknown relation endpoints: {unknown}")
    if nodes:
        await _rows(
            tx, queries.UPSERT_NODES, namespace=namespace, nodes=[_node_row(n) for n in nodes]
        )
    if relations:
        base = int(lock["relation_seq"])
        await _rows(
            tx,
            queries.UPSERT_RELATIONS,
            namespace=namespace,
            relations=[
                {
                    "source_id": r.source_id,
                    "target_id": r.target_id,
                    "relation_type": r.relation_type,
                    "chunk_ids": list(r.supporting_chunk_ids),
                    "seq": base + i + 1,
                }
                for i, r in enumerate(relations)
            ],
        )
        await _rows(tx, queries.RESERVE_RELATION_SEQ, namespace=namespace, count=len(relations))
