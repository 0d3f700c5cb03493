"""ContextProvider: the one orchestration facade over store, embedder and token counter.

authorize -> route -> search (candidates -> fuse -> expand) or text2cypher -> scoped fetch ->
the one tail (:mod:`graphctx.retrieve.bundle`: freshness -> relevance -> pack -> output gate)
-> response. Every stage returns its value and a :class:`~graphctx.retrieve.assemble.Trail`
(its StageReport, made by :func:`~graphctx.retrieve.stages.run_stage`, its denials, notes on
the route); ``aretrieve`` joins them and the response is assembled once, at the end. The
core is async; ``retrieve`` / ``ingest_path`` are thin sync wrappers running on the
provider's own event loop thread.

Deadlines: every stage that touches the store gets a slice of ``timeout_ms`` and is awaited
through :func:`~graphctx.retrieve.deadline.within`, so a store that ignores its deadline is
abandoned, not waited for. A stage that runs out is a ``timed_out`` StageReport; the manifest
is ``partial`` and ``deadline_stage`` names the first one. Failures: a retriever that fails is
a ``failed`` report while another one's evidence makes the bundle; when nothing was found and
a retriever failed, its typed error is raised (StoreUnavailableError: retryable) rather than
answering ``no_evidence``, because the store was never really asked. Running out of time with
nothing found is data: ``deadline_exceeded``. A failing fetch or output gate raises, since
nothing unverified may leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from graphctx.context import TokenCounter
from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    Denial,
    DenialReason,
    EvidenceItem,
    RetrievalMode,
    RetrieverName,
    RewriteContribution,
    RouteDecision,
    StageStatus,
    UnanswerableReason,
)
from graphctx.embed import Embedder
from graphctx.errors import GraphctxError, InvalidRequestError, StoreUnavailableError
from graphctx.retrieve.assemble import Instruments, Trail, assemble_response
from graphctx.retrieve.assist import LlmStages, LlmStagesConfig
from graphctx.retrieve.assist.embedding_rerank import EmbeddingReranker
from graphctx.retrieve.assist.llm_stages import Rewrites, search_rewrites
from graphctx.retrieve.assist.merge import fuse_rewrites
from graphctx.retrieve.assist.prompts import RouteChoice
from graphctx.retrieve.authorize import ScopeGrants, effective_scopes
from graphctx.retrieve.bundle import Fetched, finish_bundle
from graphctx.retrieve.candidates import CandidateSet, gather_candidates
from graphctx.retrieve.deadline import CANDIDATE_SHARE, EXPANSION_SHARE, Deadline, within
from graphctx.retrieve.entities import query_keys
from graphctx.retrieve.fusion import fuse_lists, ranked_candidates
from graphctx.retrieve.graph_ranking import GraphRanking, rank_with_graph
from graphctx.retrieve.question_type import QuestionClass, classify_question
from graphctx.retrieve.routing import plan_route
from graphctx.retrieve.source_window import SourceWindow, read_source_window
from graphctx.retrieve.stages import OUT_OF_TIME, Stage, StageRun, run_stage, stage_report
from graphctx.retrieve.surrounding import ItemContext, surrounding_text
from graphctx.retrieve.text2cypher import CypherReader, Text2CypherConfig, run_text2cypher
from graphctx.store.namespace_embedder import require_same_embedder
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import (
    ChunkView,
    DocumentSummary,
    EntityMatch,
    Expectation,
    StoredVersion,
)

if TYPE_CHECKING:  # ingest loads on first use: a search never pays for the loaders
    from graphctx.ingest.extract.port import GraphExtractor
    from graphctx.ingest.graph_file import GraphFileReport
    from graphctx.ingest.pipeline import IngestDefaults, IngestReport
    from graphctx.ingest.source import SourceDocument

T = TypeVar("T")
log = logging.getLogger("graphctx.provider")

FUSED_POOL = 40  # fused candidates whose chunks are fetched and offered to the packer
ENTITY_LOOKUP_SHARE = 0.1  # share of the deadline the router's entity lookup may use
ENTITY_LOOKUP_LIMIT = 20
REOPEN_INTERVAL_S = 0.5  # background open attempts while the store is unavailable at start


class ContextProvider:
    """Retrieval and ingest over one GraphStore. Construct, then ``open()`` (or use ``with``)."""

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        token_counter: TokenCounter,
        grants: ScopeGrants,
        *,
        text2cypher: Text2CypherConfig | None = None,
        llm_stages: LlmStagesConfig | LlmStages | None = None,
        embedding_rerank: EmbeddingReranker | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.token_counter = token_counter
        self.grants = grants
        self.text2cypher = text2cypher  # retrieval_mode=text2cypher: off unless enabled
        # Query rewrite, LLM router, multi-issue rerank: each off unless configured. The
        # stages (and their response cache) are shared by the providers with_grants makes.
        self.llm_stages = (
            LlmStages(llm_stages) if isinstance(llm_stages, LlmStagesConfig) else llm_stages
        )
        self.embedding_rerank = embedding_rerank  # the offline rerank (e.g. e5), off unless set
        # A long-running service sets this: a store that is only *temporarily* unavailable at
        # open (locked by another process, server restarting) is then opened in the
        # background, every REOPEN_INTERVAL_S, instead of failing the start.
        self.keep_opening_when_unavailable = False
        self._open_failure: GraphctxError | None = None
        self._opening: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._embedder_verified: set[str] = set()  # namespaces whose record names ours

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def open_failure(self) -> GraphctxError | None:
        """Why the store is not open yet (only while it is being opened in the background)."""
        return self._open_failure

    async def aopen(self) -> None:
        try:
            await self.store.open()
        except StoreUnavailableError as exc:
            if not (self.keep_opening_when_unavailable and exc.retryable):
                raise
            log.warning("store unavailable at start, opening it in the background: %s", exc)
            self._open_failure = exc
            self._opening = asyncio.get_running_loop().create_task(self._keep_opening())

    async def _keep_opening(self) -> None:
        while self._open_failure is not None and self._open_failure.retryable:
            await asyncio.sleep(REOPEN_INTERVAL_S)  # a retry period, not a synchronisation
            try:
                await self.store.open()
            except GraphctxError as exc:
                self._open_failure = exc
            else:
                self._open_failure = None
                log.info("store opened")

    async def aclose(self) -> None:
        if self._opening is not None:
            self._opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._opening
            self._opening = None
        await self.store.close()

    def open(self) -> Self:
        self._run(self.aopen())
        return self

    def close(self) -> None:
        if self._loop is None:
            return
        try:
            self._run(self.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._loop_thread is not None:
                self._loop_thread.join()
            self._loop.close()
            self._loop = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._loop_thread = threading.Thread(
                target=self._loop.run_forever, name="graphctx-loop", daemon=True
            )
            self._loop_thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    # --- sync faces --------------------------------------------------------------------------
    def retrieve(self, request: ContextRequest) -> ContextResponse:
        return self._run(self.aretrieve(request))

    def ingest_path(
        self,
        path: Path | str,
        *,
        namespace: str = "default",
        scopes: Sequence[str] = (),
        source_uri_prefix: str | None = None,
        progress: bool = False,
        extractor: GraphExtractor | None = None,
        scope_ceiling: Sequence[str] | None = None,
    ) -> IngestReport:
        """``scopes`` apply to documents without their own; with ``scope_ceiling``, a document
        whose own scopes (front matter, sidecar) name anything else is rejected."""
        from graphctx.ingest.pipeline import IngestDefaults

        defaults = IngestDefaults(
            namespace=namespace,
            scopes=scope_names(scopes, "scopes"),
            source_uri_prefix=source_uri_prefix,
            permitted_scopes=None
            if scope_ceiling is None
            else frozenset(scope_names(scope_ceiling, "scope_ceiling")),
        )
        return self._run(
            self.aingest_path(Path(path), defaults, progress=progress, extractor=extractor)
        )

    def ingest_graph(self, path: Path | str, *, namespace: str = "default") -> GraphFileReport:
        """Write a declared graph file (docs/graph-format.md); nothing is written on a problem."""
        return self._run(self.aingest_graph(Path(path), namespace))

    def delete_document(self, namespace: str, document_id: str) -> int:
        return self._run(self.adelete_document(namespace, document_id))

    def list_documents(self, namespace: str, scopes: Sequence[str]) -> list[DocumentSummary]:
        return self._run(self.alist_documents(namespace, frozenset(scope_names(scopes, "scopes"))))

    # --- composition -------------------------------------------------------------------------
    def with_grants(self, grants: ScopeGrants) -> ContextProvider:
        """An unopened provider over the same store, embedder and token counter that takes
        its grants from ``grants``; this one is left as it was (see
        :func:`graphctx.server.factory.compose_service`)."""
        return ContextProvider(
            self.store,
            self.embedder,
            self.token_counter,
            grants,
            text2cypher=self.text2cypher,
            llm_stages=self.llm_stages,
            embedding_rerank=self.embedding_rerank,
        )

    # --- async faces: documents, health, the explorer's surrounding text ---------------------
    async def aping(self) -> None:
        """Raise the store's typed error unless it answers a read now."""
        await self.store.ping()

    async def alist_documents(
        self, namespace: str, scopes: frozenset[str]
    ) -> list[DocumentSummary]:
        """The documents visible to ``scopes`` (scoped inside the store query)."""
        return await self.store.list_documents(namespace, scopes)

    async def alatest_version(self, namespace: str, document_id: str) -> StoredVersion | None:
        """Write path: the document's latest version, for a writer's permission check."""
        return await self.store.latest_version(namespace, document_id)

    async def adelete_document(
        self, namespace: str, document_id: str, *, expected: Expectation | None = None
    ) -> int:
        """Remove every version; with ``expected``, only if the latest is still that one."""
        return await self.store.delete_document(namespace, document_id, expected=expected)

    async def aingest_graph(self, path: Path, namespace: str) -> GraphFileReport:
        from graphctx.ingest.graph_file import ingest_graph_file

        return await ingest_graph_file(self.store, path, namespace)

    async def asurrounding_text(
        self, request: ContextRequest, items: Sequence[EvidenceItem]
    ) -> list[ItemContext]:
        """The document text around each of ``items`` that ``request`` may see: effective
        scopes by the rule :meth:`aretrieve` applies, chunks through the output gate's
        re-check, within ``request.timeout_ms``."""
        scopes = effective_scopes(
            self.grants, request.namespace, request.principal_id, request.allowed_scopes
        )
        deadline = Deadline(request.timeout_ms)
        return await surrounding_text(
            self.store, request.namespace, items, scopes, deadline.gate_at()
        )

    async def aread_source(
        self,
        namespace: str,
        principal_id: str,
        allowed_scopes: list[str],
        chunk_id: str,
        *,
        max_tokens: int,
        timeout_ms: int,
    ) -> SourceWindow | None:
        """More of the document around chunk ``chunk_id``, within ``max_tokens``: effective
        scopes by the rule :meth:`aretrieve` applies, the chunk read with them inside the
        store query and its neighbours through the output gate's re-check. ``None`` when the
        chunk does not exist *or* is not visible: the two are never told apart."""
        scopes = effective_scopes(self.grants, namespace, principal_id, allowed_scopes)
        deadline = Deadline(timeout_ms)
        return await read_source_window(
            self.store,
            namespace,
            chunk_id,
            scopes,
            max_tokens,
            self.token_counter.count,
            deadline.gate_at(),
        )

    # --- async core --------------------------------------------------------------------------
    async def aingest_path(
        self,
        path: Path,
        defaults: IngestDefaults,
        *,
        progress: bool = False,
        extractor: GraphExtractor | None = None,
    ) -> IngestReport:
        from graphctx.ingest.pipeline import ingest_path

        return await ingest_path(
            self.store, self.embedder, path, defaults, progress=progress, extractor=extractor
        )

    async def aingest_sources(
        self,
        sources: Sequence[SourceDocument],
        defaults: IngestDefaults,
        *,
        expected: Mapping[str, Expectation] | None = None,
    ) -> IngestReport:
        """Ingest documents already in memory (the service's JSON and upload bodies).

        ``expected`` (document id -> what the caller's permission check saw) makes every
        write conditional: see :func:`graphctx.ingest.pipeline.ingest_sources`."""
        from graphctx.ingest.pipeline import ingest_sources

        return await ingest_sources(
            self.store, self.embedder, sources, Path("."), defaults, expected=expected
        )

    async def aretrieve(self, request: ContextRequest) -> ContextResponse:
        deadline = Deadline(request.timeout_ms)
        scopes = effective_scopes(
            self.grants, request.namespace, request.principal_id, request.allowed_scopes
        )
        question = classify_question(request.query)
        (entities, trail), (choice, routed), rewrites = await asyncio.gather(
            self._lookup_entities(request, scopes, deadline),
            self._choose_routes(request, deadline),
            self._propose_rewrites(request, deadline),
        )
        trail += routed
        route = plan_route(
            request.retrieval_mode,
            question=question,
            entities=entities,
            llm_choice=None if choice is None else choice.routes,
        )
        if request.retrieval_mode is RetrievalMode.TEXT2CYPHER:  # embeds nothing
            found, searched = await self._text2cypher(request, scopes, deadline)
        else:
            # A graph route the LLM router chose is kept whenever the walk reaches anything.
            llm_graph = choice is not None and RetrieverName.GRAPH in choice.routes
            found, searched = await self._search(
                request, scopes, question, entities, route, deadline, rewrites, llm_graph
            )
            if isinstance(found, Fetched) and self.embedding_rerank is not None:
                found, rescored = await self.embedding_rerank.rerank(request, found, deadline)
                searched += rescored
            if isinstance(found, Fetched) and self.llm_stages is not None:
                found, reranked = await self.llm_stages.rerank(request, found, deadline)
                searched += reranked
        trail += searched
        if isinstance(found, Fetched):  # the one tail: freshness, relevance, pack, gate
            ending, finished = await finish_bundle(
                self.store, self.token_counter, request, scopes, deadline, found
            )
            trail += finished
        else:
            ending = found
        instruments = Instruments(self.token_counter.name, self.embedder.name)
        return assemble_response(request, deadline, scopes, instruments, route, trail, ending)

    async def _verify_embedder(self, namespace: str, deadline: Deadline) -> bool:
        """Raise ``EmbedderMismatchError`` when ``namespace`` was written by another embedder
        (in every mode: the provider is misconfigured for it). False when the deadline ran out
        first. A namespace's record never changes once written, so a match is remembered."""
        if namespace in self._embedder_verified:
            return True
        try:
            stored = await within(
                deadline.slice_at(ENTITY_LOOKUP_SHARE), self.store.namespace_embedder(namespace)
            )
        except StageTimeout:
            return False
        require_same_embedder(namespace, stored, self.embedder.name)
        if stored is not None:
            self._embedder_verified.add(namespace)
        return True

    async def _choose_routes(
        self, request: ContextRequest, deadline: Deadline
    ) -> tuple[RouteChoice | None, Trail]:
        if self.llm_stages is None:
            return None, Trail()
        return await self.llm_stages.choose_routes(request, deadline)

    async def _propose_rewrites(
        self, request: ContextRequest, deadline: Deadline
    ) -> Rewrites | None:
        if self.llm_stages is None:
            return None
        return await self.llm_stages.propose_rewrites(request, deadline)

    async def _lookup_entities(
        self, request: ContextRequest, scopes: frozenset[str], deadline: Deadline
    ) -> tuple[list[EntityMatch], Trail]:
        """Query terms that name visible entities (for routing and as expansion seeds)."""
        if request.retrieval_mode not in (RetrievalMode.AUTO, RetrievalMode.GRAPH):
            return [], Trail()
        lookup_at = deadline.slice_at(ENTITY_LOOKUP_SHARE)
        lookup = await run_stage(
            Stage.ROUTE_ENTITIES,
            lookup_at,
            self.store.lookup_entities(
                request.namespace, query_keys(request.query), scopes, ENTITY_LOOKUP_LIMIT, lookup_at
            ),
        )
        return lookup.value or [], Trail(stages=(lookup.report,))

    async def _search(
        self,
        request: ContextRequest,
        scopes: frozenset[str],
        question: QuestionClass,
        entities: list[EntityMatch],
        route: RouteDecision,
        deadline: Deadline,
        rewrites: Rewrites | None = None,
        llm_graph: bool = False,
    ) -> tuple[Fetched | UnanswerableReason, Trail]:
        """Full-text and vector search, fused; the graph walk joins when the route says so.
        Each rewritten query's own search is fused in after the original's."""
        if not await self._verify_embedder(request.namespace, deadline):
            return UnanswerableReason.DEADLINE_EXCEEDED, Trail()
        candidates_at = deadline.slice_at(CANDIDATE_SHARE)
        queries = [] if rewrites is None or rewrites.value is None else rewrites.value
        original = gather_candidates(
            self.store,
            self.embedder,
            request.namespace,
            request.query,
            scopes,
            route.retrievers,
            candidates_at,
        )
        rewritten: list[CandidateSet] = []
        if queries:
            found, rewritten = await asyncio.gather(
                original,
                search_rewrites(
                    self.store,
                    self.embedder,
                    request.namespace,
                    queries,
                    scopes,
                    route.retrievers,
                    candidates_at,
                ),
            )
        else:
            found = await original
        started = time.monotonic()
        fusion = fuse_lists(found.ranked)
        fused_report = stage_report(
            Stage.FUSE, StageStatus.OK, started, len(fusion.candidates), fusion.explain()
        )
        trail = Trail(stages=(*found.reports, fused_report))
        fused, paths, graph_joined = fusion.candidates, {}, False
        contributions: list[RewriteContribution] = []
        known_views = list(found.views)
        if rewritten:
            pairs = [
                (query, fuse_lists(rewrite.ranked).candidates)
                for query, rewrite in zip(queries, rewritten, strict=True)
            ]
            fused, contributions = fuse_rewrites(fused, pairs, FUSED_POOL)
            known_views += [view for rewrite in rewritten for view in rewrite.views]
        trail += LlmStages.rewrite_trail(rewrites, contributions)
        if RetrieverName.GRAPH in route.retrievers:
            ranking = await rank_with_graph(
                self.store,
                request.namespace,
                fused,
                entities,
                question,
                scopes,
                deadline.slice_at(EXPANSION_SHARE),
                RetrievalMode.GRAPH if llm_graph else request.retrieval_mode,
            )
            trail += _graph_trail(ranking)
            fused, graph_joined = ranking.candidates, ranking.joined
            paths = ranking.expansion.paths if ranking.joined else {}
        fused = fused[:FUSED_POOL]
        if not fused and found.failures:
            # Nothing found *because* a retriever failed is not "no evidence": the typed
            # error (StoreUnavailableError is retryable) tells the caller to try again.
            raise next(iter(found.failures.values()))
        if not fused:
            timed_out = any(r.status is StageStatus.TIMED_OUT for r in found.reports)
            return (
                UnanswerableReason.DEADLINE_EXCEEDED
                if timed_out
                else UnanswerableReason.NO_EVIDENCE
            ), trail
        started = time.monotonic()
        # The candidate search may have read the candidates' scoped views already (Neo4j does,
        # in the same statement): only the others go through the scoped fetch.
        known = {view.chunk_id: view for view in known_views}
        views = [known[c.chunk_id] for c in fused if c.chunk_id in known]
        missing = [c.chunk_id for c in fused if c.chunk_id not in known]
        if missing:
            fetched = await self._fetch(Stage.FETCH, request, scopes, missing, deadline, started)
            if fetched.value is None:
                return UnanswerableReason.DEADLINE_EXCEEDED, trail + Trail(stages=(fetched.report,))
            views += fetched.value
        named = len({m.node_id for m in entities}) if graph_joined else 0
        return Fetched(fused, views, started, paths, named_entities=named), trail

    async def _text2cypher(
        self, request: ContextRequest, scopes: frozenset[str], deadline: Deadline
    ) -> tuple[Fetched | UnanswerableReason, Trail]:
        """Guarded Text2Cypher; its Chunk ids go through the scoped fetch and the same tail."""
        config = self.text2cypher
        if config is None or not config.enabled or not isinstance(self.store, CypherReader):
            return UnanswerableReason.MODE_UNSUPPORTED, Trail()
        asked = await run_stage(
            Stage.TEXT2CYPHER,
            deadline.fetch_at(),
            run_text2cypher(
                self.store,
                config,
                request.namespace,
                request.query,
                scopes,
                deadline,
                request.trace_id,
            ),
            absorb=(),
        )
        outcome = asked.value
        if outcome is None:
            return UnanswerableReason.DEADLINE_EXCEEDED, Trail(stages=(asked.report,))
        digest = outcome.statement_sha256
        trail = Trail(
            stages=outcome.stages,
            route_reasons=() if digest is None else (f"text2cypher: statement sha256 {digest}",),
        )
        if outcome.reason is not None:
            return outcome.reason, trail
        fetched = await self._fetch(
            Stage.TEXT2CYPHER_RUN,
            request,
            scopes,
            list(outcome.chunk_ids),
            deadline,
            outcome.run_started,
            out_of_time=None,
        )
        # Only what survives the scoped fetch is reported, in an order of our own (document,
        # then position): the statement's row order and its non-chunk strings leave no trace.
        trail += Trail(stages=(fetched.report,))
        if fetched.value is None:
            return UnanswerableReason.DEADLINE_EXCEEDED, trail
        ordered = sorted(fetched.value, key=lambda v: (v.document_id, v.ordinal, v.chunk_id))
        candidates = ranked_candidates([view.chunk_id for view in ordered])
        return Fetched(candidates, fetched.value, time.monotonic()), trail

    async def _fetch(
        self,
        stage: Stage,
        request: ContextRequest,
        scopes: frozenset[str],
        chunk_ids: list[str],
        deadline: Deadline,
        started: float,
        *,
        out_of_time: str | None = OUT_OF_TIME,
    ) -> StageRun[list[ChunkView]]:
        """The visible chunks among ``chunk_ids`` (the scoped fetch); a store error raises."""
        fetch_at = deadline.fetch_at()
        return await run_stage(
            stage,
            fetch_at,
            self.store.fetch_chunks(request.namespace, chunk_ids, scopes, fetch_at),
            started=started,
            out_of_time=out_of_time,
            absorb=(),
        )


def _graph_trail(ranking: GraphRanking) -> Trail:
    """The graph stage's report, what it withheld, and whether its ranking joined."""
    graph = ranking.expansion
    withheld = (
        (Denial(stage=Stage.EXPAND.value, reason=DenialReason.OUT_OF_SCOPE, count=graph.withheld),)
        if graph.withheld
        else ()
    )
    return Trail(
        stages=(graph.report,),
        denied=withheld,
        route_reasons=(ranking.reason,),
        left_out=frozenset() if ranking.joined else frozenset({RetrieverName.GRAPH}),
    )


def scope_names(scopes: Sequence[str], field: str) -> tuple[str, ...]:
    """Scope names as given. A plain string is refused, as ``ContextRequest`` refuses it:
    read as a sequence it would be its characters, each a scope of its own."""
    if isinstance(scopes, str):
        raise InvalidRequestError(
            f"{field} must be a list of scope names, not one string", field=field
        )
    return tuple(scopes)
