"""The optional LLM stages as the provider runs them: query rewrite, LLM router, rerank.

Each is off unless its :class:`~.config.LlmStagesConfig` flag is set, and each leaves the
pipeline exactly as it would be without it when it times out, fails, or answers something
unusable: its ``llm.*`` stage report says ``timed_out`` / ``failed`` and nothing else
changes. What the model returns is only ever *chosen among* — routes among the allowed ones,
extra queries whose own scoped searches find the candidates, an order of candidates it was
shown — and never becomes evidence text. The rerank prompt holds only chunks the scoped
fetch returned for the request's effective scopes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from graphctx.contract import (
    ContextRequest,
    RetrievalMode,
    RetrieverName,
    RewriteContribution,
    StageStatus,
)
from graphctx.embed.port import Embedder
from graphctx.retrieve.assemble import Trail
from graphctx.retrieve.assist.ask import Asked, ask_model
from graphctx.retrieve.assist.cache import ResponseCache
from graphctx.retrieve.assist.config import LlmStagesConfig
from graphctx.retrieve.assist.merge import apply_order
from graphctx.retrieve.assist.prompts import (
    RERANK_PROMPT_VERSION,
    REWRITE_PROMPT_VERSION,
    ROUTE_PROMPT_VERSION,
    RouteChoice,
    parse_order,
    parse_rewrites,
    parse_routes,
    rerank_messages,
    rewrite_messages,
    route_messages,
)
from graphctx.retrieve.bundle import Fetched
from graphctx.retrieve.candidates import CandidateSet, gather_candidates
from graphctx.retrieve.deadline import Deadline
from graphctx.retrieve.freshness import classify_freshness
from graphctx.retrieve.question_issues import is_multi_issue
from graphctx.retrieve.stages import Stage, stage_report
from graphctx.store.port import GraphStore

__all__ = ["AUTO_ROUTES", "LlmStages", "Rewrites"]

AUTO_ROUTES = (RetrieverName.FULLTEXT, RetrieverName.VECTOR, RetrieverName.GRAPH)

Rewrites = Asked[list[str]]


class LlmStages:
    """The configured stages and their response cache (one per provider)."""

    def __init__(self, config: LlmStagesConfig) -> None:
        self.config = config
        self.cache = ResponseCache(config.cache_size)

    # --- LLM router ------------------------------------------------------------------------
    async def choose_routes(
        self, request: ContextRequest, deadline: Deadline
    ) -> tuple[RouteChoice | None, Trail]:
        """The routes the model picks among those ``auto`` allows; None: the rules decide.
        An explicit retrieval_mode is the caller's choice: the router is not asked."""
        if not self.config.route:
            return None, Trail()
        if request.retrieval_mode is not RetrievalMode.AUTO:
            said = f"retrieval_mode {request.retrieval_mode.value} fixes the route"
            return None, _skipped(Stage.LLM_ROUTE, said)
        asked = await ask_model(
            self.config.chat,
            self.cache,
            Stage.LLM_ROUTE,
            ROUTE_PROMPT_VERSION,
            route_messages(request.query, AUTO_ROUTES),
            deadline.slice_at(self.config.route_share),
            lambda reply: parse_routes(reply, AUTO_ROUTES),
            lambda choice: len(choice.routes),
        )
        model = asked.model
        if asked.value is not None:
            choice = asked.value
            model = model.model_copy(
                update={
                    "applied": True,
                    "routes": list(choice.routes),
                    "ignored": list(choice.ignored),
                    "reasons": list(choice.reasons),
                }
            )
        return asked.value, Trail(stages=(asked.report,), model_stages=(model,))

    # --- query rewrite ---------------------------------------------------------------------
    async def propose_rewrites(
        self, request: ContextRequest, deadline: Deadline
    ) -> Rewrites | None:
        """The model's rewrites of the query (None: the stage is off or not for this mode)."""
        if not self.config.rewrite or request.retrieval_mode is RetrievalMode.TEXT2CYPHER:
            return None
        limit = self.config.max_rewrites
        return await ask_model(
            self.config.chat,
            self.cache,
            Stage.LLM_REWRITE,
            REWRITE_PROMPT_VERSION,
            rewrite_messages(request.query, limit),
            deadline.slice_at(self.config.rewrite_share),
            lambda reply: parse_rewrites(reply, request.query, limit),
            len,
        )

    @staticmethod
    def rewrite_trail(
        asked: Rewrites | None, contributions: Sequence[RewriteContribution]
    ) -> Trail:
        if asked is None:
            return Trail()
        model = asked.model
        if asked.value:
            model = model.model_copy(update={"applied": True, "rewrites": list(contributions)})
        return Trail(stages=(asked.report,), model_stages=(model,))

    # --- rerank ----------------------------------------------------------------------------
    async def rerank(
        self, request: ContextRequest, fetched: Fetched, deadline: Deadline
    ) -> tuple[Fetched, Trail]:
        """For a multi-issue question, the top visible candidates in the model's order."""
        if not self.config.rerank:
            return fetched, Trail()
        if not is_multi_issue(request.query):
            return fetched, _skipped(Stage.LLM_RERANK, "not a multi-issue question")
        views = {view.chunk_id: view for view in fetched.views}  # the scoped fetch: visible
        shown = [i for i, c in enumerate(fetched.candidates) if c.chunk_id in views]
        shown = shown[: self.config.rerank_top_n]
        if len(shown) < 2:
            return fetched, _skipped(Stage.LLM_RERANK, "fewer than two visible candidates")
        now = datetime.now(UTC)
        passages = [
            (view.text, classify_freshness(view, now))
            for view in (views[fetched.candidates[i].chunk_id] for i in shown)
        ]
        messages, labels = rerank_messages(request.query, passages)
        asked = await ask_model(
            self.config.chat,
            self.cache,
            Stage.LLM_RERANK,
            RERANK_PROMPT_VERSION,
            messages,
            deadline.slice_at(self.config.rerank_share),
            lambda reply: parse_order(reply, labels),
            len,
        )
        if asked.value is None:
            return fetched, Trail(stages=(asked.report,), model_stages=(asked.model,))
        reordered = apply_order(fetched.candidates, shown, asked.value)
        model = asked.model.model_copy(
            update={"applied": True, "order": [reordered[i].chunk_id for i in shown]}
        )
        trail = Trail(stages=(asked.report,), model_stages=(model,))
        return replace(fetched, candidates=reordered), trail


async def search_rewrites(
    store: GraphStore,
    embedder: Embedder,
    namespace: str,
    rewrites: Sequence[str],
    scopes: frozenset[str],
    retrievers: list[RetrieverName],
    deadline_at: float,
) -> list[CandidateSet]:
    """Each rewrite's own scoped candidate search, side by side, within the same slice."""
    return list(
        await asyncio.gather(
            *(
                gather_candidates(
                    store, embedder, namespace, rewrite, scopes, retrievers, deadline_at
                )
                for rewrite in rewrites
            )
        )
    )


def _skipped(stage: Stage, detail: str) -> Trail:
    return Trail(stages=(stage_report(stage, StageStatus.SKIPPED, time.monotonic(), 0, detail),))
