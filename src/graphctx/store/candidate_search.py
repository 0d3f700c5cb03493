"""One candidate search: the full-text and vector lists of a query, each with its own outcome.

:meth:`GraphStore.search_candidates` returns a :class:`CandidateSearch`. A store that can
answer both lists (and the scoped views of their chunks) in one statement does so (Neo4j:
one round trip instead of four); any other store composes its own ``fulltext_search`` and
``vector_search`` with :func:`compose_candidate_search`, where each list keeps running on its
own, so a slow or failed one never costs the other its result.

A list that did not finish is data, not an exception: ``hits`` is None, and ``failure`` says
why when it was not the deadline. The caller turns each outcome into its stage report.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from graphctx.errors import GraphctxError
from graphctx.store.port import StageTimeout
from graphctx.store.records import ChunkHit, ChunkView, Vector

__all__ = [
    "CandidateList",
    "CandidateSearch",
    "QueryVector",
    "bounded",
    "compose_candidate_search",
    "done",
    "failed",
    "outcome_of",
    "timed_out",
]

T = TypeVar("T")

# The query's embedding, awaited by the store when it needs it (it may raise StageTimeout).
QueryVector = Coroutine[Any, Any, Vector]


@dataclass(frozen=True)
class CandidateList:
    """One retriever's ranked hits, or why there are none (``hits`` None)."""

    hits: list[ChunkHit] | None
    finished_at: float  # time.monotonic() when the outcome was known
    failure: GraphctxError | None = None  # set only when the list failed (not timed out)

    @property
    def timed_out(self) -> bool:
        return self.hits is None and self.failure is None


@dataclass(frozen=True)
class CandidateSearch:
    """``fulltext`` / ``vector`` are None when not asked for. ``views``: visible views of
    candidate chunks the store read along with them (any subset, possibly none); the caller
    fetches whatever else it needs."""

    fulltext: CandidateList | None
    vector: CandidateList | None
    views: tuple[ChunkView, ...] = ()


def done(hits: list[ChunkHit]) -> CandidateList:
    return CandidateList(hits, time.monotonic())


def timed_out() -> CandidateList:
    return CandidateList(None, time.monotonic())


def failed(error: GraphctxError) -> CandidateList:
    return CandidateList(None, time.monotonic(), error)


async def bounded(deadline: float, work: Awaitable[T]) -> T:
    """``await work`` until ``deadline`` (monotonic seconds), else StageTimeout."""
    try:
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            return await work
    except TimeoutError as exc:
        raise StageTimeout("abandoned at the deadline") from exc


async def outcome_of(deadline: float, work: Awaitable[list[ChunkHit]]) -> CandidateList:
    """Run one list to its outcome: hits, timed out at ``deadline``, or failed."""
    try:
        return done(await bounded(deadline, work))
    except StageTimeout:
        return timed_out()
    except GraphctxError as exc:
        return failed(exc)


class SeparateSearches(Protocol):
    async def fulltext_search(
        self, namespace: str, query: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]: ...

    async def vector_search(
        self, namespace: str, vector: Vector, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]: ...


async def compose_candidate_search(
    store: SeparateSearches,
    namespace: str,
    query: str | None,
    query_vector: QueryVector | None,
    scopes: frozenset[str],
    limit: int,
    deadline: float,
) -> CandidateSearch:
    """``search_candidates`` from the store's separate searches, run side by side."""

    async def vector_list(pending: QueryVector) -> list[ChunkHit]:
        vector = await pending
        return await store.vector_search(namespace, vector, scopes, limit, deadline)

    async def nothing() -> None:
        return None

    fulltext, vector = await asyncio.gather(
        nothing()
        if query is None
        else outcome_of(deadline, store.fulltext_search(namespace, query, scopes, limit, deadline)),
        nothing() if query_vector is None else outcome_of(deadline, vector_list(query_vector)),
    )
    return CandidateSearch(fulltext, vector)
