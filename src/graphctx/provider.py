"""ContextProvider: the one orchestration facade over store, embedder and token counter.

authorize -> route -> candidates -> fuse -> expand -> freshness -> pack -> output gate -> response.
The core is async; ``retrieve`` / ``ingest_path`` are thin sync wrappers running on the
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
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from graphctx.context import (
    Evidence,
    PackResult,
    TokenCounter,
    pack_to_budget,
)
from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    Denial,
    DenialReason,
    RetrievalMode,
    RetrieverName,
    StageReport,
    StageStatus,
    UnanswerableReason,
)
from graphctx.embed import Embedder
from graphctx.errors import GraphctxError, StoreUnavailableError
from graphctx.ingest.extract.port import GraphExtractor
from graphctx.ingest.graph_file import GraphFileReport, ingest_graph_file
from graphctx.ingest.pipeline import IngestDefaults, IngestReport, ingest_path, ingest_sources
from graphctx.ingest.source import SourceDocument
from graphctx.retrieve.assemble import RankedEvidence, ResponseBuilder, demote_stale
from graphctx.retrieve.authorize import ScopeGrants, effective_scopes
from graphctx.retrieve.candidates import gather_candidates
from graphctx.retrieve.deadline import CANDIDATE_SHARE, EXPANSION_SHARE, Deadline, within
from graphctx.retrieve.entities import query_keys
from graphctx.retrieve.freshness import classify_freshness, meets_requirement
from graphctx.retrieve.fusion import FusedCandidate, fuse_lists, ranked_candidates
from graphctx.retrieve.gate import verify_visible
from graphctx.retrieve.graph_ranking import rank_with_graph
from graphctx.retrieve.question_type import QuestionClass, classify_question
from graphctx.retrieve.relevance import assess_relevance
from graphctx.retrieve.routing import plan_route
from graphctx.retrieve.text2cypher import CypherReader, Text2CypherConfig, run_text2cypher
from graphctx.store.namespace_embedder import require_same_embedder
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import ChunkView, DocumentSummary, EntityMatch, Expectation

T = TypeVar("T")
log = logging.getLogger("graphctx.provider")

FUSED_POOL = 40  # fused candidates whose chunks are fetched and offered to the packer
ENTITY_LOOKUP_SHARE = 0.1  # share of the deadline the router's entity lookup may use
ENTITY_LOOKUP_LIMIT = 20
_OUT_OF_TIME = "ran out of its deadline slice"
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
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.token_counter = token_counter
        self.grants = grants
        self.text2cypher = text2cypher  # retrieval_mode=text2cypher: off unless enabled
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
        defaults = IngestDefaults(
            namespace=namespace,
            scopes=tuple(scopes),
            source_uri_prefix=source_uri_prefix,
            permitted_scopes=None if scope_ceiling is None else frozenset(scope_ceiling),
        )
        return self._run(
            self.aingest_path(Path(path), defaults, progress=progress, extractor=extractor)
        )

    def ingest_graph(self, path: Path | str, *, namespace: str = "default") -> GraphFileReport:
        """Write a declared graph file (docs/graph-format.md); nothing is written on a problem."""
        return self._run(ingest_graph_file(self.store, Path(path), namespace))

    def delete_document(self, namespace: str, document_id: str) -> int:
        return self._run(self.store.delete_document(namespace, document_id))

    def list_documents(self, namespace: str, scopes: Sequence[str]) -> list[DocumentSummary]:
        return self._run(self.store.list_documents(namespace, frozenset(scopes)))

    # --- async core --------------------------------------------------------------------------
    async def aingest_path(
        self,
        path: Path,
        defaults: IngestDefaults,
        *,
        progress: bool = False,
        extractor: GraphExtractor | None = None,
    ) -> IngestReport:
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
        return await ingest_sources(
            self.store, self.embedder, sources, Path("."), defaults, expected=expected
        )

    async def aretrieve(self, request: ContextRequest) -> ContextResponse:
        deadline = Deadline(request.timeout_ms)
        scopes = effective_scopes(
            self.grants, request.namespace, request.principal_id, request.allowed_scopes
        )
        question = classify_question(request.query)
        entities, lookup_report = await self._lookup_entities(request, scopes, deadline)
        route = plan_route(request.retrieval_mode, question=question, entities=entities)
        build = ResponseBuilder(self, request, deadline, route, scopes)
        if lookup_report is not None:
            build.stages.append(lookup_report)
        if request.retrieval_mode is RetrievalMode.TEXT2CYPHER:  # embeds nothing
            return await self._text2cypher(request, scopes, deadline, build)
        if not await self._verify_embedder(request.namespace, deadline):
            return build.unanswerable(UnanswerableReason.DEADLINE_EXCEEDED)

        found = await gather_candidates(
            self.store,
            self.embedder,
            request.namespace,
            request.query,
            scopes,
            route.retrievers,
            deadline.slice_at(CANDIDATE_SHARE),
        )
        build.stages.extend(found.reports)
        started = time.monotonic()
        fusion = fuse_lists(found.ranked)
        build.stage("fuse", StageStatus.OK, started, len(fusion.candidates), fusion.explain())
        fused = fusion.candidates
        if RetrieverName.GRAPH in route.retrievers:
            fused = await self._expand(request, scopes, question, entities, fused, deadline, build)
        fused = fused[:FUSED_POOL]
        if not fused and found.failures:
            # Nothing found *because* a retriever failed is not "no evidence": the typed
            # error (StoreUnavailableError is retryable) tells the caller to try again.
            raise next(iter(found.failures.values()))
        if not fused:
            timed_out = any(r.status is StageStatus.TIMED_OUT for r in found.reports)
            reason = (
                UnanswerableReason.DEADLINE_EXCEEDED
                if timed_out
                else UnanswerableReason.NO_EVIDENCE
            )
            return build.unanswerable(reason)

        ranked = await self._rank_fresh(request, scopes, fused, deadline, build, found.views)
        if ranked is None:
            return build.unanswerable(UnanswerableReason.DEADLINE_EXCEEDED)
        if not ranked:
            return build.unanswerable(
                UnanswerableReason.FRESHNESS_UNMET
                if build.dropped_for_freshness
                else UnanswerableReason.NO_EVIDENCE
            )
        started = time.monotonic()
        relevance = assess_relevance(
            request.query,
            [r.view.text for r in ranked],
            named_entities=len({m.node_id for m in entities})
            if RetrieverName.GRAPH in build.route.retrievers
            else 0,
        )
        build.stage("relevance", StageStatus.OK, started, len(ranked), relevance.explain())
        if not relevance.answerable:
            return build.unanswerable(UnanswerableReason.NO_EVIDENCE)
        return await self._pack_and_gate(request, scopes, ranked, deadline, build)

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

    async def _text2cypher(
        self,
        request: ContextRequest,
        scopes: frozenset[str],
        deadline: Deadline,
        build: ResponseBuilder,
    ) -> ContextResponse:
        """Guarded Text2Cypher; its Chunk ids go through fetch, freshness, packing and the gate."""
        config = self.text2cypher
        if config is None or not config.enabled or not isinstance(self.store, CypherReader):
            return build.unanswerable(UnanswerableReason.MODE_UNSUPPORTED)
        started = time.monotonic()
        try:
            outcome = await within(
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
            )
        except StageTimeout:
            build.stage("text2cypher", StageStatus.TIMED_OUT, started, detail=_OUT_OF_TIME)
            return build.unanswerable(UnanswerableReason.DEADLINE_EXCEEDED)
        build.stages.extend(outcome.stages)
        if outcome.statement_sha256 is not None:
            build.add_route_reason(f"text2cypher: statement sha256 {outcome.statement_sha256}")
        if outcome.reason is not None:
            return build.unanswerable(outcome.reason)
        views = await self._fetch_views(request, scopes, list(outcome.chunk_ids), deadline)
        if views is None:
            build.stage("text2cypher.run", StageStatus.TIMED_OUT, outcome.run_started)
            return build.unanswerable(UnanswerableReason.DEADLINE_EXCEEDED)
        # Only what survives the scoped fetch is reported, in an order of our own (document,
        # then position): the statement's row order and its non-chunk strings leave no trace.
        build.stage("text2cypher.run", StageStatus.OK, outcome.run_started, len(views))
        ordered = sorted(views, key=lambda v: (v.document_id, v.ordinal, v.chunk_id))
        candidates = ranked_candidates([view.chunk_id for view in ordered])
        ranked = self._rank_views(request, candidates, views, time.monotonic(), build)
        if not ranked:
            return build.unanswerable(
                UnanswerableReason.FRESHNESS_UNMET
                if build.dropped_for_freshness
                else UnanswerableReason.NO_EVIDENCE
            )
        return await self._pack_and_gate(request, scopes, ranked, deadline, build)

    async def _lookup_entities(
        self, request: ContextRequest, scopes: frozenset[str], deadline: Deadline
    ) -> tuple[list[EntityMatch], StageReport | None]:
        """Query terms that name visible entities (for routing and as expansion seeds)."""
        if request.retrieval_mode not in (RetrievalMode.AUTO, RetrievalMode.GRAPH):
            return [], None
        started = time.monotonic()
        status, detail, matches = StageStatus.OK, None, []
        lookup_at = deadline.slice_at(ENTITY_LOOKUP_SHARE)
        try:
            matches = await within(
                lookup_at,
                self.store.lookup_entities(
                    request.namespace,
                    query_keys(request.query),
                    scopes,
                    ENTITY_LOOKUP_LIMIT,
                    lookup_at,
                ),
            )
        except StageTimeout:
            status, detail = StageStatus.TIMED_OUT, _OUT_OF_TIME
        except GraphctxError as exc:
            status, detail = StageStatus.FAILED, exc.code
        report = StageReport(
            stage="route.entities",
            status=status,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            candidates=len(matches),
            detail=detail,
        )
        return matches, report

    async def _expand(
        self,
        request: ContextRequest,
        scopes: frozenset[str],
        question: QuestionClass,
        entities: list[EntityMatch],
        fused: list[FusedCandidate],
        deadline: Deadline,
        build: ResponseBuilder,
    ) -> list[FusedCandidate]:
        """Graph expansion: scores propagated from the anchors join the fused ones when the
        mode asks for the graph or (auto) the walk's evidence supports it."""
        ranking = await rank_with_graph(
            self.store,
            request.namespace,
            fused,
            entities,
            question,
            scopes,
            deadline.slice_at(EXPANSION_SHARE),
            request.retrieval_mode,
        )
        graph = ranking.expansion
        build.stages.append(graph.report)
        if graph.withheld:
            build.denied.append(
                Denial(stage="expand", reason=DenialReason.OUT_OF_SCOPE, count=graph.withheld)
            )
        build.add_route_reason(ranking.reason)
        if not ranking.joined:
            build.leave_out(RetrieverName.GRAPH)
            return fused
        build.graph_paths = graph.paths
        return ranking.candidates

    async def _rank_fresh(
        self,
        request: ContextRequest,
        scopes: frozenset[str],
        fused: list[FusedCandidate],
        deadline: Deadline,
        build: ResponseBuilder,
        known: Sequence[ChunkView] = (),
    ) -> list[RankedEvidence] | None:
        """``known``: visible views the candidate search already read; only the rest are
        fetched (none at all when every fused candidate is known)."""
        started = time.monotonic()
        by_id = {v.chunk_id: v for v in known}
        views = [by_id[c.chunk_id] for c in fused if c.chunk_id in by_id]
        missing = [c.chunk_id for c in fused if c.chunk_id not in by_id]
        if missing:
            fetched = await self._fetch_views(request, scopes, missing, deadline)
            if fetched is None:
                build.stage("fetch", StageStatus.TIMED_OUT, started, detail=_OUT_OF_TIME)
                return None
            views += fetched
        return self._rank_views(request, fused, views, started, build)

    async def _fetch_views(
        self,
        request: ContextRequest,
        scopes: frozenset[str],
        chunk_ids: list[str],
        deadline: Deadline,
    ) -> list[ChunkView] | None:
        """The visible chunks among ``chunk_ids`` (the scoped fetch); None past the deadline."""
        fetch_at = deadline.fetch_at()
        try:
            return await within(
                fetch_at, self.store.fetch_chunks(request.namespace, chunk_ids, scopes, fetch_at)
            )
        except StageTimeout:
            return None

    def _rank_views(
        self,
        request: ContextRequest,
        fused: list[FusedCandidate],
        views: list[ChunkView],
        started: float,
        build: ResponseBuilder,
    ) -> list[RankedEvidence]:
        """Fused candidates that have a visible view and meet the freshness requirement."""
        by_id = {v.chunk_id: v for v in views}
        now = datetime.now(UTC)
        ranked: list[RankedEvidence] = []
        for candidate in fused:
            view = by_id.get(candidate.chunk_id)
            if view is None:
                continue
            freshness = classify_freshness(view, now)
            if not meets_requirement(view, freshness, request.freshness_required_at):
                build.dropped_for_freshness += 1
                continue
            ranked.append(
                RankedEvidence(
                    view, candidate, freshness, build.graph_paths.get(candidate.chunk_id)
                )
            )
        ranked = demote_stale(ranked)
        build.stage("fetch+freshness", StageStatus.OK, started, len(ranked))
        return ranked

    async def _pack_and_gate(
        self,
        request: ContextRequest,
        scopes: frozenset[str],
        ranked: list[RankedEvidence],
        deadline: Deadline,
        build: ResponseBuilder,
    ) -> ContextResponse:
        started = time.monotonic()
        packed = self._pack(ranked, request.max_tokens)
        by_id = {r.view.chunk_id: r for r in ranked}
        chosen = [by_id[b.evidence.evidence_id].view for b in packed.blocks]
        try:
            visible, withheld = await verify_visible(
                self.store, request.namespace, chosen, scopes, deadline.gate_at(), request.trace_id
            )
        except StageTimeout:
            # Fail closed: nothing the gate could not re-check leaves, and the bundle says
            # the deadline (not the ACL) emptied it.
            build.stage("output_gate", StageStatus.TIMED_OUT, started, detail=_OUT_OF_TIME)
            return build.unanswerable(UnanswerableReason.DEADLINE_EXCEEDED)
        if withheld:
            build.denied.append(
                Denial(
                    stage="output_gate", reason=DenialReason.NOT_VISIBLE_AT_OUTPUT, count=withheld
                )
            )
            keep = {v.chunk_id for v in visible}
            packed = self._pack([r for r in ranked if r.view.chunk_id in keep], request.max_tokens)
        build.stage("pack+gate", StageStatus.OK, started, len(packed.blocks))
        build.packing_drops = dict(packed.dropped)
        reason = packed.unanswerable_reason
        if reason is not None:
            return build.unanswerable(UnanswerableReason.ALL_DENIED if withheld else reason)
        return build.answer(packed, by_id)

    def _pack(self, ranked: list[RankedEvidence], budget: int) -> PackResult:
        evidence = [
            Evidence(
                evidence_id=r.view.chunk_id,
                document_id=r.view.document_id,
                document_version=r.view.document_version,
                source_uri=r.view.source_uri,
                text=r.view.text,
                start_char=r.view.start_char,
                end_char=r.view.end_char,
                rank=rank,
                freshness=r.freshness,
                on_graph_path=r.path is not None,
            )
            for rank, r in enumerate(ranked)
        ]
        return pack_to_budget(evidence, budget, self.token_counter)
