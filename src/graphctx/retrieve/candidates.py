"""Candidate generation: full-text and vector retrievers in one store call, each on its own clock.

Both lists come from :meth:`GraphStore.search_candidates` (one round trip on Neo4j; on other
stores the two searches run side by side). A retriever that runs out of its slice or fails
becomes a StageReport, never an exception: the others' evidence still makes a bundle. The
failure itself is kept (``failures``) so the caller can raise it when nothing else produced
evidence — "the store failed" must not turn into "nothing found". Chunk views the store read
along with the candidates are passed on (``views``), so the fetch stage reads only the rest.

The one store call ends each list at its own time, so the two ``candidates.*`` reports are
built here from the call's per-list outcomes rather than by
:func:`~graphctx.retrieve.stages.run_stage` (which reports one awaited piece of work).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from graphctx.contract import RetrieverName, StageReport, StageStatus
from graphctx.embed.port import Embedder
from graphctx.errors import GraphctxError
from graphctx.retrieve.deadline import within
from graphctx.retrieve.stages import Stage
from graphctx.store.candidate_lists import CandidateList, CandidateSearch
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import ChunkHit, ChunkView, Vector

__all__ = ["CANDIDATE_LIMIT", "CandidateSet", "gather_candidates"]

CANDIDATE_LIMIT = 50
# The store ends each list at the deadline itself; this later bound only stops a store that
# does not, without racing the lists that did finish in time.
BACKSTOP_GRACE_S = 0.05


@dataclass(frozen=True)
class CandidateSet:
    ranked: dict[RetrieverName, list[ChunkHit]]  # only retrievers that finished in time
    reports: list[StageReport]
    failures: dict[RetrieverName, GraphctxError] = field(default_factory=dict)
    views: tuple[ChunkView, ...] = ()  # visible views of candidates, read with them


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
    chosen = [r for r in retrievers if r in _RETRIEVERS]
    if not chosen:
        return CandidateSet({}, [])
    started = time.monotonic()
    budget_ms = max(0, int((deadline_at - started) * 1000))
    progress = {name: _Progress() for name in chosen}

    async def query_vector() -> Vector:
        step = progress[RetrieverName.VECTOR]
        step.step = "query embedding"
        vec = await asyncio.to_thread(embedder.embed_query, query)
        if time.monotonic() > deadline_at:
            raise StageTimeout("query embedding used the whole slice")
        step.step = "store query"
        return vec

    search: CandidateSearch | None = None
    error: GraphctxError | None = None
    try:
        search = await within(
            deadline_at + BACKSTOP_GRACE_S,
            store.search_candidates(
                namespace,
                query if RetrieverName.FULLTEXT in chosen else None,
                query_vector() if RetrieverName.VECTOR in chosen else None,
                scopes,
                CANDIDATE_LIMIT,
                deadline_at,
            ),
        )
    except StageTimeout:
        pass  # every list timed out
    except GraphctxError as exc:
        error = exc
    ranked: dict[RetrieverName, list[ChunkHit]] = {}
    reports: list[StageReport] = []
    failures: dict[RetrieverName, GraphctxError] = {}
    for name in chosen:
        found = None if search is None else _RETRIEVERS[name](search)
        if found is None:
            found = CandidateList(None, time.monotonic(), error)
        report = partial(
            StageReport,
            stage=Stage.candidates(name).value,
            elapsed_ms=int((found.finished_at - started) * 1000),
            budget_ms=budget_ms,
        )
        if found.hits is not None:
            ranked[name] = found.hits
            reports.append(report(status=StageStatus.OK, candidates=len(found.hits)))
        elif found.failure is not None:
            failures[name] = found.failure
            reports.append(report(status=StageStatus.FAILED, detail=found.failure.code))
        else:
            detail = f"ran out of its deadline slice during {progress[name].step}"
            reports.append(report(status=StageStatus.TIMED_OUT, detail=detail))
    return CandidateSet(ranked, reports, failures, () if search is None else search.views)


_RETRIEVERS: dict[RetrieverName, Callable[[CandidateSearch], CandidateList | None]] = {
    RetrieverName.FULLTEXT: lambda search: search.fulltext,
    RetrieverName.VECTOR: lambda search: search.vector,
}
