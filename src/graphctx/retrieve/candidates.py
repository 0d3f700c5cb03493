"""Candidate generation: full-text and vector retrievers in parallel, each on its own clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from graphctx.contract import RetrieverName, StageReport, StageStatus
from graphctx.embed import Embedder
from graphctx.errors import GraphctxError
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import ChunkHit

CANDIDATE_LIMIT = 50


@dataclass(frozen=True)
class CandidateSet:
    ranked: dict[RetrieverName, list[ChunkHit]]
    reports: list[StageReport]


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

    async def fulltext() -> list[ChunkHit]:
        return await store.fulltext_search(namespace, query, scopes, CANDIDATE_LIMIT, deadline_at)

    async def vector() -> list[ChunkHit]:
        vec = await asyncio.to_thread(embedder.embed_query, query)
        if time.monotonic() > deadline_at:
            raise StageTimeout("query embedding used the whole slice")
        return await store.vector_search(namespace, vec, scopes, CANDIDATE_LIMIT, deadline_at)

    runners: dict[RetrieverName, Callable[[], Awaitable[list[ChunkHit]]]] = {
        RetrieverName.FULLTEXT: fulltext,
        RetrieverName.VECTOR: vector,
    }
    chosen = [r for r in retrievers if r in runners]
    outcomes = await asyncio.gather(*(_timed(r, runners[r], deadline_at) for r in chosen))
    ranked = {name: hits for name, hits, _ in outcomes if hits is not None}
    return CandidateSet(ranked, [report for _, _, report in outcomes])


async def _timed(
    name: RetrieverName, run: Callable[[], Awaitable[list[ChunkHit]]], deadline_at: float
) -> tuple[RetrieverName, list[ChunkHit] | None, StageReport]:
    started = time.monotonic()
    budget_ms = max(0, int((deadline_at - started) * 1000))

    def report(status: StageStatus, count: int = 0, detail: str | None = None) -> StageReport:
        return StageReport(
            stage=f"candidates.{name.value}",
            status=status,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            budget_ms=budget_ms,
            candidates=count,
            detail=detail,
        )

    try:
        hits = await asyncio.wait_for(run(), timeout=max(0.0, deadline_at - time.monotonic()))
    except (TimeoutError, StageTimeout):
        return name, None, report(StageStatus.TIMED_OUT, detail="ran out of its deadline slice")
    except GraphctxError as exc:
        return name, None, report(StageStatus.FAILED, detail=exc.code)
    return name, hits, report(StageStatus.OK, len(hits))
