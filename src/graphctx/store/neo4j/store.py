"""Neo4jGraphStore: the GraphStore port on a Neo4j server (2026.01 or newer).

Two drivers, two paths. Reads use the read driver only, always in a READ access-mode
transaction whose server-side timeout is the time left until the caller's deadline, inside a
client-side ``asyncio.timeout`` of the same budget plus a small grace, so a hung connection
cannot hold a request either (:mod:`.sessions`). Writes use a separate driver (its
credentials may differ) in managed write transactions, one per document or batch
(``write_documents``), retried through an outage for at most ``write_retry_s``; a write
takes a lock on its ``Namespace`` node, so writers of a namespace are serialised as in the
embedded store. Driver errors become typed
graphctx errors in :mod:`.failures`.

Semantics mirror :class:`graphctx.store.sqlite.store.SqliteGraphStore` exactly; how scopes
become index filters is described in :mod:`graphctx.store.neo4j.acl`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar

import neo4j
import neo4j.exceptions as neo4j_errors
import numpy as np

from graphctx.contract import NodeKind
from graphctx.errors import (
    ConfigurationError,
    GraphctxError,
    InvalidDocumentError,
    InvalidRequestError,
    StoreUnavailableError,
)
from graphctx.store.bm25 import (
    BM25_B,
    BM25_K1,
    Candidate,
    PoolStatistics,
    rank_with_statistics,
)
from graphctx.store.candidate_lists import (
    CandidateList,
    CandidateSearch,
    QueryVector,
    done,
    failed,
    timed_out,
)
from graphctx.store.candidate_search import bounded
from graphctx.store.namespace_embedder import EmbedderRecord
from graphctx.store.neo4j import acl, candidate_queries, graph, graph_queries, queries, writes
from graphctx.store.neo4j.failures import (
    CREDENTIAL_CODES,
    DRIVER_FAILURES,
    as_graphctx_error,
    unavailable,
)
from graphctx.store.neo4j.rows import chunk_view, fetch, fetch_one, stored_version
from graphctx.store.neo4j.schema import SchemaReport, check_server_version, init_schema
from graphctx.store.neo4j.sessions import (
    CLIENT_GRACE_S,
    DEFAULT_WRITE_RETRY_S,
    OPEN_TIMEOUT_S,
    Auth,
    ReadWork,
    WriteWork,
    bounded_read,
    bounded_statement,
    bounded_write,
    new_driver,
    plain_row,
)
from graphctx.store.port import StageTimeout
from graphctx.store.records import (
    ChunkHit,
    ChunkView,
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
)
from graphctx.text.lexical import query_terms

T = TypeVar("T")

DEFAULT_READ_TIMEOUT_S = 30.0  # reads without a caller deadline (listing, version lookups)
# Readiness probes (``/readyz``) must answer fast whether the server is up, down or stalled.
PING_TIMEOUT_S = 2.0
EXACT_SEARCH_MAX_CHUNKS = 1_000  # AUTO: exact cosine up to this many visible chunks (README)
IN_INDEX_CANDIDATES_FACTOR = 2  # in-index search fetches limit x this, then re-ranks
# Full text: the visible Lucene matches of the essential terms are scored from visible
# statistics; past this many, Lucene's own (index-wide) ranking chooses which ones are scored
# (docs/security.md, R4).
FULLTEXT_POOL = 10_000
# Visible Lucene matches probed per hit asked for, to set the threshold that prunes terms
# (candidate_queries.FULLTEXT_CALLS); any number gives the same hits, a better threshold fewer rows.
FULLTEXT_PROBE_FACTOR = 2
# The most term clauses of the essential pool's nested Lucene query (candidate_queries);
# a longer query asks for the holders of each essential term with one weaker term.
FULLTEXT_NESTED_CLAUSES = 512
# search_candidates returns this many best full-text matches per hit asked for (by the same
# BM25 in Cypher), which Python re-scores exactly: a margin for last-bit differences.
LEXICAL_VIEW_MARGIN = 2
# open() plans CANDIDATE_SEARCH once (seconds on a busy server; the plan is then cached
# server-wide) with parameters of the types a request sends, in a namespace that cannot exist,
# so the first request does not pay for it. A warm-up that fails (no schema yet) or runs past
# this bound is left to that request.
PLAN_WARM_UP_S = 10.0
# Sizes like a request's: the server may plan again for other parameter values (measured).
WARM_UP_LIMIT = 50  # the retrieval pipeline's candidate limit (retrieve.candidates)
WARM_UP_DIMENSION = 512  # the default embedder's (use-multilingual-v3)


class VectorStrategy(StrEnum):
    """How vector search applies scopes. Both are strict; they trade recall for latency."""

    AUTO = "auto"  # EXACT up to ``exact_max_chunks`` visible chunks, IN_INDEX beyond
    EXACT = "exact"  # cosine over the pre-filtered visible chunks: 100% recall
    IN_INDEX = "in_index"  # HNSW with the scope filter inside the index (SEARCH ... WHERE)


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
        write_retry_s: float = DEFAULT_WRITE_RETRY_S,
    ) -> None:
        self.uri = uri
        self.database = database
        self.vector_strategy = vector_strategy
        self.exact_max_chunks = exact_max_chunks
        self.ensure_schema_on_write = ensure_schema_on_write
        self.client_grace_s = CLIENT_GRACE_S
        self.write_retry_s = write_retry_s  # how long a write retries through an outage
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
    async def open(self) -> None:
        """Connect both drivers and check the server, within ``OPEN_TIMEOUT_S``.

        Raises ``StoreUnavailableError`` when the server cannot be reached (``retryable``) or
        refuses the credentials (not retryable), ``ConfigurationError`` for bad settings or
        a server that is too old. Nothing stays open after a failure.
        """
        if self._reader is not None:
            return
        try:
            reader = new_driver(self.uri, self._auth, write_retry_s=self.write_retry_s)
            writer = new_driver(self.uri, self._write_auth, write_retry_s=self.write_retry_s)
        except (neo4j_errors.ConfigurationError, ValueError) as exc:
            raise ConfigurationError(f"invalid Neo4j location {self.uri!r}: {exc}") from exc
        self._reader, self._writer = reader, writer
        action = f"opening {self.uri}"
        try:
            async with asyncio.timeout(OPEN_TIMEOUT_S):
                await reader.verify_connectivity()
            row = await self._read(
                lambda tx: fetch_one(tx, queries.SERVER_COMPONENTS),
                time.monotonic() + OPEN_TIMEOUT_S,
                action,
            )
            if row is None:
                raise StoreUnavailableError("the server did not report its version")
            check_server_version(str(row["version"]))
            self.server_version = str(row["version"])
            await self._warm_up_candidate_plan()
        except BaseException as exc:
            await self.close()
            if isinstance(exc, TimeoutError | StageTimeout):  # reachable, but no answer
                raise unavailable(
                    f"{action}: no answer within {OPEN_TIMEOUT_S:.0f} s", retryable=True
                ) from exc
            if isinstance(exc, DRIVER_FAILURES):
                raise as_graphctx_error(exc, action) from exc
            raise

    async def _warm_up_candidate_plan(self) -> None:
        params = self._candidate_parameters(
            "",
            '+acl_terms:(0)^0 +(terms:"warm")',
            ["warm", "up", "plan"],
            [0.0] * WARM_UP_DIMENSION,
            frozenset({"", " "}),
            WARM_UP_LIMIT,
        )
        try:
            await self._read(
                lambda tx: fetch(tx, candidate_queries.CANDIDATE_SEARCH, **params),
                time.monotonic() + PLAN_WARM_UP_S,
                "planning the candidate search",
            )
        except (StageTimeout, GraphctxError):  # e.g. no schema yet: the first request plans it
            return

    async def close(self) -> None:
        reader, writer = self._reader, self._writer
        self._reader = self._writer = None
        for driver in (reader, writer):
            if driver is not None:
                await driver.close()

    async def ping(self) -> None:
        """Readiness: one trivial read, answered (or failed) within ``PING_TIMEOUT_S``.

        A ping past its time is the store being unavailable, not a stage timing out.
        """
        try:
            await self._read(
                lambda tx: fetch_one(tx, queries.PING), time.monotonic() + PING_TIMEOUT_S, "ping"
            )
        except StageTimeout as exc:
            raise StoreUnavailableError(f"ping: no answer within {PING_TIMEOUT_S} s") from exc

    async def init_schema(self) -> SchemaReport:
        """Create constraints and indexes on the write path (``graphctx neo4j init``)."""
        writer = self._require(self._writer)
        try:
            self.schema = await init_schema(writer, self.database)
        except DRIVER_FAILURES as exc:
            raise as_graphctx_error(exc, "creating the graphctx schema") from exc
        await self._warm_up_candidate_plan()  # a new schema: the first plan is made here
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
        return await bounded_read(
            reader, self.database, work, budget, grace_s=self.client_grace_s, action=action
        )

    async def _read_rows(
        self,
        query: str,
        parameters: dict[str, Any],
        deadline: float | None,
        action: str = "read",
        *,
        own: bool = True,
    ) -> list[dict[str, Any]]:
        """One statement's rows in one READ auto-commit transaction bounded as ``_read``:
        one round trip instead of an explicit transaction's three (:mod:`.sessions`).
        ``own``: a statement of graphctx's, whose rows hold plain values only."""
        reader = self._require(self._reader)
        budget = DEFAULT_READ_TIMEOUT_S if deadline is None else deadline - time.monotonic()
        return await bounded_statement(
            reader,
            self.database,
            query,
            parameters,
            budget,
            grace_s=self.client_grace_s,
            action=action,
            row=plain_row if own else neo4j.Record.data,
        )

    async def _write(self, work: WriteWork[T], action: str) -> T:
        """Run ``work`` in one managed write transaction (retried on transient errors)."""
        writer = self._require(self._writer)
        if self.ensure_schema_on_write and self.schema is None:
            async with self._schema_lock:
                if self.schema is None:
                    await self.init_schema()
        return await bounded_write(
            writer, self.database, work, retry_s=self.write_retry_s, action=action
        )

    async def run_read(
        self, query: str, parameters: Mapping[str, Any], deadline: float
    ) -> list[dict[str, Any]]:
        """Run one statement on the retrieval path: READ access mode, deadline-bound.

        The server refuses writes here (``InvalidRequestError`` code ``read_only_violation``).
        This is the only way to run Cypher that graphctx did not write; guard it above.
        """
        return await self._read_rows(query, dict(parameters), deadline, "query", own=False)

    # --- generated statements (Text2Cypher): guard them above, see retrieve/text2cypher -----
    async def explain_read(
        self, query: str, parameters: Mapping[str, Any], deadline: float
    ) -> tuple[str, tuple[str, ...]]:
        """How the server classifies ``query`` without running it: (query type, columns).

        ``EXPLAIN`` in a READ transaction. The query type is ``r`` (read only), ``rw``, ``w``
        or ``s`` (schema). A statement the server will not plan raises
        ``InvalidRequestError`` with code ``statement_refused``.
        """

        async def work(tx: neo4j.AsyncTransaction) -> tuple[str, tuple[str, ...]]:
            result = await tx.run(graph_queries.EXPLAIN_PREFIX + query, dict(parameters))
            columns = tuple(result.keys())
            summary = await result.consume()
            return str(summary.query_type or ""), columns

        return await self._statement(work, deadline, "explain")

    async def run_statement_read(
        self, query: str, parameters: Mapping[str, Any], deadline: float
    ) -> list[dict[str, Any]]:
        """``run_read`` for a generated statement: a statement the server refuses or fails
        raises ``InvalidRequestError`` (``statement_refused`` / ``read_only_violation``)
        rather than the operator's ``StoreUnavailableError``."""
        return await self._statement(lambda tx: fetch(tx, query, **parameters), deadline, "query")

    async def visible_relation_types(
        self, namespace: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[str]:
        """Typed relations with at least one relation visible to ``scopes`` (schema, no data)."""
        if not scopes or limit <= 0:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[str]:
            rows = await fetch(
                tx,
                graph_queries.VISIBLE_RELATION_TYPES,
                namespace=namespace,
                scopes=sorted(scopes),
                limit=limit,
            )
            return [str(row["relation_type"]) for row in rows]

        return await self._read(work, deadline, "relation types")

    async def _statement(self, work: ReadWork[T], deadline: float, action: str) -> T:
        try:
            return await self._read(work, deadline, action)
        except StoreUnavailableError as exc:
            cause = exc.__cause__
            if not isinstance(cause, neo4j_errors.ClientError):
                raise
            code = cause.code or ""
            if code.startswith(CREDENTIAL_CODES):
                raise
            raise InvalidRequestError(
                f"{action}: the server refused the statement ({code})", code="statement_refused"
            ) from cause

    # --- write path ------------------------------------------------------------------------
    async def namespace_embedder(self, namespace: str) -> EmbedderRecord | None:
        async def work(tx: neo4j.AsyncTransaction) -> EmbedderRecord | None:
            row = await fetch_one(tx, queries.NAMESPACE_EMBEDDER, namespace=namespace)
            if row is None or row["embedder"] is None:
                return None
            return EmbedderRecord(str(row["embedder"]), int(row["dimension"]))

        return await self._read(work, None, "namespace embedder")

    async def latest_version(self, namespace: str, document_id: str) -> StoredVersion | None:
        async def work(tx: neo4j.AsyncTransaction) -> StoredVersion | None:
            row = await fetch_one(
                tx, queries.LATEST_VERSION, namespace=namespace, document_id=document_id
            )
            return stored_version(document_id, None if row is None else row["latest"])

        return await self._read(work, None, "latest version")

    async def latest_versions(
        self, namespace: str, document_ids: Sequence[str]
    ) -> dict[str, StoredVersion]:
        ids = list(dict.fromkeys(document_ids))

        async def work(tx: neo4j.AsyncTransaction) -> dict[str, StoredVersion]:
            rows = await fetch(tx, queries.LATEST_VERSIONS, namespace=namespace, document_ids=ids)
            found = (stored_version(str(row["document_id"]), row["latest"]) for row in rows)
            return {version.document_id: version for version in found if version is not None}

        return await self._read(work, None, "latest versions") if ids else {}

    async def write_document(
        self,
        document: NewDocument,
        chunks: Sequence[NewChunk],
        embedder_name: str,
        *,
        expected: Expectation | None = None,
    ) -> WriteResult:
        write = DocumentWrite(document, tuple(chunks), expected)
        (result,) = await self._write_batch(
            document.namespace, [write], embedder_name, f"writing {document.document_id}"
        )
        if isinstance(result, InvalidDocumentError):
            raise result
        return result

    async def write_documents(
        self, namespace: str, writes: Sequence[DocumentWrite], embedder_name: str
    ) -> list[WriteResult | InvalidDocumentError]:
        if not writes:
            return []
        action = f"writing {len(writes)} documents"
        return await self._write_batch(namespace, writes, embedder_name, action)

    async def _write_batch(
        self, namespace: str, batch: Sequence[DocumentWrite], embedder_name: str, action: str
    ) -> list[WriteResult | InvalidDocumentError]:
        async def work(
            tx: neo4j.AsyncManagedTransaction,
        ) -> list[WriteResult | InvalidDocumentError]:
            return await writes.write_documents(tx, namespace, batch, embedder_name)

        return await self._write(work, action)

    async def delete_document(
        self, namespace: str, document_id: str, *, expected: Expectation | None = None
    ) -> int:
        async def work(tx: neo4j.AsyncManagedTransaction) -> int:
            return await writes.delete_document(tx, namespace, document_id, expected)

        return await self._write(work, f"deleting {document_id}")

    async def write_graph(
        self, namespace: str, nodes: Sequence[KnowledgeNode], relations: Sequence[Relation]
    ) -> None:
        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            await writes.write_graph(tx, namespace, nodes, relations)

        await self._write(work, "writing graph")

    # --- read path -------------------------------------------------------------------------
    async def fulltext_search(
        self, namespace: str, query: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        """The full-text list of :meth:`search_candidates` (the same statement)."""
        search = await self.search_candidates(namespace, query, None, scopes, limit, deadline)
        found = search.fulltext
        assert found is not None, "a query was given"
        if found.failure is not None:
            raise found.failure
        if found.hits is None:
            raise StageTimeout("fulltext search passed its deadline")
        return found.hits

    async def vector_search(
        self, namespace: str, vector: Vector, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        if not scopes or limit <= 0:
            return []
        query_vector = np.asarray(vector, dtype=np.float32).astype(np.float64).tolist()

        async def work(tx: neo4j.AsyncTransaction) -> list[ChunkHit]:
            plan = await fetch_one(
                tx, queries.VECTOR_PLAN, namespace=namespace, scopes=sorted(scopes)
            )
            if plan is None or plan["dimension"] is None or not plan["keys"]:
                return []
            if int(plan["dimension"]) != len(query_vector):
                raise ConfigurationError(
                    f"query vector has dimension {len(query_vector)} but namespace {namespace!r}"
                    f" stores {plan['dimension']}: use the embedder it was ingested with"
                )
            strategy = self._vector_strategy_for(int(plan["visible"] or 0))
            if strategy is VectorStrategy.EXACT:
                rows = await fetch(
                    tx,
                    queries.VECTOR_SEARCH_EXACT,
                    keys=plan["keys"],
                    vector=query_vector,
                    limit=limit,
                    scopes=sorted(scopes),
                )
            else:
                rows = await fetch(
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

    async def search_candidates(
        self,
        namespace: str,
        query: str | None,
        query_vector: QueryVector | None,
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> CandidateSearch:
        """Both searches and the scoped views of their hits in one READ statement.

        The full-text list waits for the query embedding (one round trip instead of two
        parallel ones). Lists, scores and order are those of ``fulltext_search`` and
        ``vector_search``; a failed or timed-out statement is the outcome of every list asked
        for, a dimension mismatch only of the vector list.
        """
        fulltext: CandidateList | None = None
        vector: CandidateList | None = None
        query_vector_list: list[float] | None = None
        if query_vector is not None:
            try:
                got = await bounded(deadline, query_vector)
                query_vector_list = np.asarray(got, dtype=np.float32).astype(np.float64).tolist()
            except StageTimeout:
                vector = timed_out()
            except GraphctxError as exc:
                vector = failed(exc)
        lucene = None if query is None else acl.lucene_query(namespace, query, scopes)
        if query is not None and (lucene is None or limit <= 0):
            fulltext = done([])
        if query_vector_list is not None and (not scopes or limit <= 0):
            vector, query_vector_list = done([]), None
        if lucene is None and query_vector_list is None:
            return CandidateSearch(fulltext, vector)
        terms = [] if query is None or lucene is None else query_terms(query)

        def settled(fallback: CandidateList) -> CandidateSearch:
            """Every list still open (asked for, not yet known) ends as ``fallback``."""
            return CandidateSearch(
                fulltext or (None if query is None else fallback),
                vector or (None if query_vector is None else fallback),
            )

        try:
            row, lexical, views = await self._candidate_row(
                namespace, lucene, terms, query_vector_list, scopes, limit, deadline
            )
        except StageTimeout:
            return settled(timed_out())
        except GraphctxError as exc:
            return settled(failed(exc))
        if fulltext is None and query is not None:
            fulltext = done(lexical)
        if vector is None and query_vector_list is not None:
            vector = self._vector_outcome(row, namespace, len(query_vector_list))
        return CandidateSearch(fulltext, vector, views)

    async def _candidate_row(
        self,
        namespace: str,
        lucene: str | None,
        terms: list[str],
        vector: list[float] | None,
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> tuple[dict[str, Any], list[ChunkHit], tuple[ChunkView, ...]]:
        """The candidate statement, alone in its READ transaction: one round trip. Returns
        its row, Python's full-text hits ranked from it and the views of the hits."""
        (row,) = await self._read_rows(
            candidate_queries.CANDIDATE_SEARCH,
            self._candidate_parameters(namespace, lucene, terms, vector, scopes, limit),
            deadline,
            "candidate search",
        )
        if lucene is not None and row["unmigrated"]:
            raise ConfigurationError(
                "this graph has no full-text statistics yet (written by an older graphctx):"
                " run `graphctx neo4j init` to add them"
            )
        lexical = self._lexical_hits(row, limit)
        wanted = [h.chunk_id for h in lexical]
        if vector is not None and self._dimension_matches(row, len(vector)):
            wanted += [str(h["chunk_id"]) for h in row["vector_hits"]]
        # Python's hits are among the rows the statement read views for (lexical_top and the
        # vector hits); the extra margin rows' views are dropped unread.
        found = {str(v["chunk_id"]): v for v in row["views"]}
        views = tuple(chunk_view(found[cid]) for cid in dict.fromkeys(wanted) if cid in found)
        return row, lexical, views

    def _candidate_parameters(
        self,
        namespace: str,
        lucene: str | None,
        terms: list[str],
        vector: list[float] | None,
        scopes: frozenset[str],
        limit: int,
    ) -> dict[str, Any]:
        return {
            "namespace": namespace,
            "scopes": sorted(scopes),
            "lucene": lucene,
            "complement": None
            if lucene is None
            else acl.complement_query(namespace, terms, scopes),
            "acl": "" if lucene is None else acl.acl_clause(namespace, scopes),
            "probe": limit * FULLTEXT_PROBE_FACTOR,
            "pool": FULLTEXT_POOL,
            "clauses": FULLTEXT_NESTED_CLAUSES,
            "terms": " ".join(terms),
            "quoted": " ".join(acl.quoted_term(term) for term in terms),
            "k1": BM25_K1,
            "b": BM25_B,
            "view_pool": limit * LEXICAL_VIEW_MARGIN,
            "vector": vector,
            "strategy": self.vector_strategy.value,
            "exact_max": self.exact_max_chunks,
            "limit": limit,
            "candidates": limit * IN_INDEX_CANDIDATES_FACTOR,
        }

    @staticmethod
    def _lexical_hits(row: Mapping[str, Any], limit: int) -> list[ChunkHit]:
        """Python's ranking of the pool's best rows, scored from the whole pool's statistics:
        the hits and scores of ``fulltext_search``."""
        candidates = [
            Candidate(
                str(r["chunk_id"]),
                str(r["chunk_id"]),
                int(r["length"]),
                tuple(int(tf) for tf in r["frequencies"]),
            )
            for r in row["lexical_top"]
        ]
        pool = PoolStatistics(
            int(row["pool_size"]),
            int(row["total_length"]),
            tuple(int(held) for held in row["holding"]),
        )
        ranked = rank_with_statistics(candidates, pool, int(row["visible"]), limit)
        return [ChunkHit(chunk_id, score) for chunk_id, score in ranked]

    @staticmethod
    def _dimension_matches(row: Mapping[str, Any], dimension: int) -> bool:
        return row["dimension"] is not None and int(row["dimension"]) == dimension

    def _vector_outcome(
        self, row: Mapping[str, Any], namespace: str, dimension: int
    ) -> CandidateList:
        if row["dimension"] is None or not row["any_visible_set"]:
            return done([])
        if not self._dimension_matches(row, dimension):
            return failed(
                ConfigurationError(
                    f"query vector has dimension {dimension} but namespace {namespace!r}"
                    f" stores {row['dimension']}: use the embedder it was ingested with"
                )
            )
        hits = sorted(
            ((str(h["chunk_id"]), float(h["score"])) for h in row["vector_hits"]),
            key=lambda hit: (-hit[1], hit[0]),
        )
        # Neo4j reports cosine as (1 + cos) / 2; the port speaks plain cosine.
        return done([ChunkHit(chunk_id, 2.0 * score - 1.0) for chunk_id, score in hits])

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

        parameters = {
            "namespace": namespace,
            "chunk_ids": list(dict.fromkeys(chunk_ids)),
            "scopes": sorted(scopes),
        }
        rows = await self._read_rows(queries.FETCH_CHUNKS, parameters, deadline, "fetch chunks")
        views = {str(row["chunk_id"]): chunk_view(row) for row in rows}
        return [views[cid] for cid in chunk_ids if cid in views]

    async def list_documents(self, namespace: str, scopes: frozenset[str]) -> list[DocumentSummary]:
        if not scopes:
            return []

        async def work(tx: neo4j.AsyncTransaction) -> list[DocumentSummary]:
            rows = await fetch(
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
            rows = await fetch(
                tx,
                queries.NODES_FOR_CHUNKS,
                namespace=namespace,
                chunk_ids=list(dict.fromkeys(chunk_ids)),
                scopes=sorted(scopes),
            )
            support: dict[str, list[str]] = {}
            kinds: dict[str, str] = {}
            for row in rows:
                node_id = str(row["node_id"])
                support.setdefault(node_id, []).append(str(row["chunk_id"]))
                kinds[node_id] = str(row["kind"])
            texts = {
                t.node_id: t for t in await graph.describe_nodes(tx, namespace, [*kinds], scopes)
            }
            # Only visible nodes (a mention does not show a node whose home is hidden). Derived
            # text rule: the name is shown only when every supporting document is visible,
            # otherwise the node is named by its id; the type only through visible support.
            # The description never is.
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

        rows = await self._read_rows(
            graph_queries.LOOKUP_ENTITIES_WITH_COUNTS,
            graph.lookup_parameters(namespace, keys, scopes, limit),
            deadline,
            "entity lookup",
        )
        return graph.entity_matches(rows)

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
            rows = await fetch(
                tx, queries.DOCUMENT_CHUNKS, namespace=namespace, document_id=document_id
            )
            return [chunk_view(row) for row in rows]

        return await self._read(work, None, "document chunks")
