"""One candidate search: the full-text and vector lists of a query, each with its own outcome.

:meth:`GraphStore.search_candidates` returns a :class:`CandidateSearch`. A store that can
answer both lists (and the scoped views of their chunks) in one statement does so (Neo4j:
one round trip instead of four); any other store composes its own ``fulltext_search`` and
``vector_search`` with :func:`compose_candidate_search`, where each list keeps running on its
own, so a slow or failed one never costs the other its result.

The outcome types are in :mod:`graphctx.store.candidate_lists`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Protocol, TypeVar

from graphctx.errors import GraphctxError
from graphctx.store.candidate_lists import (
    CandidateList,
    CandidateSearch,
    QueryVector,
    done,
    failed,
    timed_out,
)
from graphctx.store.port import StageTimeout
from graphctx.store.records import ChunkHit, Vector

__all__ = ["bounded", "compose_candidate_search", "outcome_of"]

T = TypeVar("T")


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
