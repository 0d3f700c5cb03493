"""The outcome of one candidate search: each list's hits, or why there are none.

:meth:`GraphStore.search_candidates` returns a :class:`CandidateSearch`
(:mod:`graphctx.store.candidate_search` composes one for stores without a combined search).
A list that did not finish is data, not an exception: ``hits`` is None, and ``failure`` says
why when it was not the deadline. The caller turns each outcome into its stage report.
"""

from __future__ import annotations

import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from graphctx.errors import GraphctxError
from graphctx.store.records import ChunkHit, ChunkView, Vector

__all__ = ["CandidateList", "CandidateSearch", "QueryVector", "done", "failed", "timed_out"]

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
