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

from graphctx.contract import RetrieverName, StageReport, StageStatus
from graphctx.embed import Embedder
from graphctx.errors import GraphctxError
from graphctx.retrieve.deadline import within
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
    outcomes = await asyncio.gather(*(_timed(r, runners[r], deadline_at) for r in chosen))
    return CandidateSet(
        ranked={o.name: o.hits for o in outcomes if o.hits is not None},
        reports=[o.report for o in outcomes],
        failures={o.name: o.error for o in outcomes if o.error is not None},
    )


@dataclass(frozen=True)
class _Outcome:
    name: RetrieverName
    hits: list[ChunkHit] | None
    report: StageReport
    error: GraphctxError | None = None


async def _timed(
    name: RetrieverName,
    run: Callable[[_Progress], Awaitable[list[ChunkHit]]],
    deadline_at: float,
) -> _Outcome:
    started = time.monotonic()
    budget_ms = max(0, int((deadline_at - started) * 1000))
    progress = _Progress()

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
        hits = await within(deadline_at, run(progress))
    except StageTimeout:
        detail = f"ran out of its deadline slice during {progress.step}"
        return _Outcome(name, None, report(StageStatus.TIMED_OUT, detail=detail))
    except GraphctxError as exc:
        return _Outcome(name, None, report(StageStatus.FAILED, detail=exc.code), exc)
    return _Outcome(name, hits, report(StageStatus.OK, len(hits)))
