"""``graphctx eval`` columns for the optional LLM stages, one per configured stage.

Each column starts from the ranking the stage would change, through the provider's own
stage code (:class:`~graphctx.retrieve.assist.LlmStages`):

- ``hybrid+rewrite``: the hybrid ranking with each rewritten query's search fused in;
- ``auto+llm-router``: the retrievers the LLM router chose (ontology augmentation after it);
- ``hybrid+rerank``: the hybrid ranking, its top candidates reordered by the model for
  multi-issue questions (the others keep the hybrid ranking);
- ``hybrid+embedding-rerank``: the hybrid ranking, its top candidates rescored offline by a
  configured embedder (:mod:`graphctx.retrieve.assist.embedding_rerank`), every question.

A stage that fails or times out leaves its column equal to the ranking it started from, as
in the pipeline. Against a recorded or rule-following chat server these columns demonstrate
the mechanism, not a model's quality.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphctx.contract import ContextRequest, RetrievalMode, RetrieverName, StageStatus
from graphctx.embed import Embedder
from graphctx.retrieve.assemble import Trail
from graphctx.retrieve.assist import LlmStages
from graphctx.retrieve.assist.embedding_rerank import EmbeddingReranker
from graphctx.retrieve.assist.llm_stages import search_rewrites
from graphctx.retrieve.assist.merge import fuse_rewrites
from graphctx.retrieve.bundle import Fetched
from graphctx.retrieve.candidates import CandidateSet
from graphctx.retrieve.deadline import Deadline
from graphctx.retrieve.fusion import FusedCandidate, fuse_lists
from graphctx.retrieve.graph_ranking import rank_with_graph
from graphctx.retrieve.question_type import QuestionClass
from graphctx.retrieve.routing import plan_route
from graphctx.store.port import GraphStore
from graphctx.store.records import EntityMatch

__all__ = [
    "EMBEDDING_RERANK_COLUMN",
    "LLM_COLUMNS",
    "StageTally",
    "embedding_reranked",
    "llm_rankings",
]

LLM_COLUMNS = {"rewrite": "hybrid+rewrite", "route": "auto+llm-router", "rerank": "hybrid+rerank"}
EMBEDDING_RERANK_COLUMN = "hybrid+embedding-rerank"
POOL = 40  # as the provider's fused pool
TIMEOUT_MS = 30_000
# eval measures what the offline rerank does to the ranking, not whether it fits a request's
# deadline: e5 embeds ~3 passages per second on a loaded 2-core machine
EMBEDDING_TIMEOUT_MS = 120_000


@dataclass
class StageTally:
    """Per stage: questions it ran for (not skipped), changed the ranking, failed / timed out."""

    asked: int = 0
    applied: int = 0
    failed: int = 0
    tokens: int = 0
    cached: int = 0
    by_status: dict[str, int] = field(default_factory=dict)

    def add(self, trail: Trail) -> None:
        for report in trail.stages:
            self.by_status[report.status.value] = self.by_status.get(report.status.value, 0) + 1
            if report.status is not StageStatus.SKIPPED:
                self.asked += 1
            if report.status in (StageStatus.FAILED, StageStatus.TIMED_OUT):
                self.failed += 1
        for model in trail.model_stages:
            self.applied += model.applied
            self.cached += model.cached
            if model.usage is not None and not model.cached:
                self.tokens += model.usage.prompt_tokens + model.usage.completion_tokens


@dataclass(frozen=True)
class _Question:
    query: str
    namespace: str
    scopes: frozenset[str]
    found: CandidateSet
    hybrid: list[FusedCandidate]
    question: QuestionClass
    entities: Sequence[EntityMatch]

    def request(self, mode: RetrievalMode) -> ContextRequest:
        return ContextRequest(
            query=self.query,
            principal_id="eval",
            allowed_scopes=sorted(self.scopes),
            namespace=self.namespace,
            retrieval_mode=mode,
            timeout_ms=TIMEOUT_MS,
        )


async def llm_rankings(
    stages: LlmStages,
    store: GraphStore,
    embedder: Embedder,
    namespace: str,
    scopes: frozenset[str],
    query: str,
    found: CandidateSet,
    question: QuestionClass,
    entities: Sequence[EntityMatch],
    tallies: dict[str, StageTally],
) -> dict[str, list[FusedCandidate]]:
    """The ranking of every configured stage's column for one question."""
    asked = _Question(
        query, namespace, scopes, found, fuse_lists(found.ranked).candidates, question, entities
    )
    config = stages.config
    columns: dict[str, list[FusedCandidate]] = {}
    for stage, enabled in (("rewrite", config.rewrite), ("route", config.route),
                           ("rerank", config.rerank)):  # fmt: skip
        if not enabled:
            continue
        if stage == "rewrite":
            ranking, trail = await _rewrite(stages, store, embedder, asked)
        elif stage == "route":
            ranking, trail = await _route(stages, store, asked)
        else:
            ranking, trail = await _rerank(stages, store, asked)
        tallies.setdefault(stage, StageTally()).add(trail)
        columns[LLM_COLUMNS[stage]] = ranking
    return columns


async def _rewrite(
    stages: LlmStages, store: GraphStore, embedder: Embedder, q: _Question
) -> tuple[list[FusedCandidate], Trail]:
    deadline = Deadline(TIMEOUT_MS)
    rewrites = await stages.propose_rewrites(q.request(RetrievalMode.HYBRID), deadline)
    queries = [] if rewrites is None or rewrites.value is None else rewrites.value
    if not queries:
        return q.hybrid, LlmStages.rewrite_trail(rewrites, [])
    retrievers = [RetrieverName.FULLTEXT, RetrieverName.VECTOR]
    searched = await search_rewrites(
        store, embedder, q.namespace, queries, q.scopes, retrievers, deadline.slice_at(0.6)
    )
    pairs = [
        (text, fuse_lists(s.ranked).candidates) for text, s in zip(queries, searched, strict=True)
    ]
    merged, contributions = fuse_rewrites(q.hybrid, pairs, POOL)
    return merged, LlmStages.rewrite_trail(rewrites, contributions)


async def _route(
    stages: LlmStages, store: GraphStore, q: _Question
) -> tuple[list[FusedCandidate], Trail]:
    deadline = Deadline(TIMEOUT_MS)
    choice, trail = await stages.choose_routes(q.request(RetrievalMode.AUTO), deadline)
    route = plan_route(
        RetrievalMode.AUTO,
        question=q.question,
        entities=q.entities,
        llm_choice=None if choice is None else choice.routes,
    )
    lists = {r: hits for r, hits in q.found.ranked.items() if r in route.retrievers}
    fused = fuse_lists(lists).candidates
    if RetrieverName.GRAPH in route.retrievers:
        chose_graph = choice is not None and RetrieverName.GRAPH in choice.routes
        graph = await rank_with_graph(
            store,
            q.namespace,
            fused,
            q.entities,
            q.question,
            q.scopes,
            deadline.slice_at(0.5),
            RetrievalMode.GRAPH if chose_graph else RetrievalMode.AUTO,
        )
        fused = graph.candidates
    return fused, trail


async def _rerank(
    stages: LlmStages, store: GraphStore, q: _Question
) -> tuple[list[FusedCandidate], Trail]:
    deadline = Deadline(TIMEOUT_MS)
    shown = q.hybrid[: stages.config.rerank_top_n]
    started = time.monotonic()
    views = await store.fetch_chunks(
        q.namespace, [c.chunk_id for c in shown], q.scopes, deadline.slice_at(0.5)
    )
    fetched = Fetched(q.hybrid, views, started)
    reranked, trail = await stages.rerank(q.request(RetrievalMode.HYBRID), fetched, deadline)
    return list(reranked.candidates), trail


async def embedding_reranked(
    reranker: EmbeddingReranker,
    store: GraphStore,
    namespace: str,
    scopes: frozenset[str],
    query: str,
    found: CandidateSet,
    tally: StageTally,
) -> list[FusedCandidate]:
    """The hybrid ranking with its top candidates rescored by ``reranker``."""
    hybrid = fuse_lists(found.ranked).candidates
    deadline = Deadline(EMBEDDING_TIMEOUT_MS)
    started = time.monotonic()
    shown = [c.chunk_id for c in hybrid[: reranker.top_n]]
    views = await store.fetch_chunks(namespace, shown, scopes, deadline.slice_at(0.5))
    request = ContextRequest(
        query=query,
        principal_id="eval",
        allowed_scopes=sorted(scopes),
        namespace=namespace,
        retrieval_mode=RetrievalMode.HYBRID,
        timeout_ms=EMBEDDING_TIMEOUT_MS,
    )
    reranked, trail = await reranker.rerank(request, Fetched(hybrid, views, started), deadline)
    tally.add(trail)
    return list(reranked.candidates)
