"""Candidate generation: full-text and vector retrievers in parallel, each on its own clock.

A retriever that runs out of its slice or fails becomes a StageReport, never an exception:
the others' evidence still makes a bundle. The failure itself is kept (``failures``) so the
caller can raise it when nothing else produced evidence — "the store failed" must not turn
into "nothing found".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from graphctx.contract import RetrieverName, StageReport
from graphctx.embed.port import Embedder
from graphctx.errors import GraphctxError
from graphctx.retrieve.stages import Stage, StageRun, run_stage
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import ChunkHit

__all__ = ["CANDIDATE_LIMIT", "CandidateSet", "gather_candidates"]

CANDIDATE_LIMIT = 50


@dataclass(frozen=True)
class CandidateSet:
    ranked: dict[RetrieverName, list[ChunkHit]]  # only retrievers that finished in time
    reports: list[StageReport]
    failures: dict[RetrieverName, GraphctxError] = field(default_factory=dict)


@dataclass
class _Progress:
    """Which step a retriever is in, so a timeout can say where the time went."""

    step: str = "store query"


async def gather_candidates(
    store: GraphStore,
    embedder: Embedder,
    namespace: str,
    query: str,
    scopes: frozenset[str],
    retrievers: list[RetrieverName],
    deadline_at: float,
) -> CandidateSet:
    """Run each requested lexical/vector retriever; a slow or failed one yields a report."""

    async def fulltext(progress: _Progress) -> list[ChunkHit]:
        return await store.fulltext_search(namespace, query, scopes, CANDIDATE_LIMIT, deadline_at)

    async def vector(progress: _Progress) -> list[ChunkHit]:
        progress.step = "query embedding"
        vec = await asyncio.to_thread(embedder.embed_query, query)
        if time.monotonic() > deadline_at:
            raise StageTimeout("query embedding used the whole slice")
        progress.step = "store query"
        return await store.vector_search(namespace, vec, scopes, CANDIDATE_LIMIT, deadline_at)

    runners: dict[RetrieverName, Callable[[_Progress], Awaitable[list[ChunkHit]]]] = {
        RetrieverName.FULLTEXT: fulltext,
        RetrieverName.VECTOR: vector,
    }
    chosen = [r for r in retrievers if r in runners]
    runs = await asyncio.gather(*(_run(r, runners[r], deadline_at) for r in chosen))
    by_name = dict(zip(chosen, runs, strict=True))
    return CandidateSet(
        ranked={name: run.value for name, run in by_name.items() if run.value is not None},
        reports=[run.report for run in runs],
        failures={name: run.error for name, run in by_name.items() if run.error is not None},
    )


async def _run(
    name: RetrieverName,
    search: Callable[[_Progress], Awaitable[list[ChunkHit]]],
    deadline_at: float,
) -> StageRun[list[ChunkHit]]:
    progress = _Progress()
    return await run_stage(
        Stage.candidates(name),
        deadline_at,
        search(progress),
        with_budget=True,
        out_of_time=lambda: f"ran out of its deadline slice during {progress.step}",
    )
