"""The request's stages by name, and the one way a stage is run and reported.

Every stage of a request leaves one :class:`~graphctx.contract.StageReport` in the manifest.
:func:`run_stage` awaits a stage's work within its deadline and turns the outcome into that
report: finished is ``ok`` (with a count and an optional detail), out of time is
``timed_out``, a typed error it is told to absorb is ``failed`` (detail: the error's code;
the error itself is kept for the caller). Anything else propagates: a stage that must not
fail quietly (fetch, the output gate) simply absorbs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sized
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from graphctx.contract import RetrieverName, StageReport, StageStatus
from graphctx.errors import GraphctxError
from graphctx.retrieve.deadline import within
from graphctx.store.port import StageTimeout

__all__ = ["OUT_OF_TIME", "Stage", "StageRun", "run_stage", "stage_report"]

T = TypeVar("T")

OUT_OF_TIME = "ran out of its deadline slice"


class Stage(StrEnum):
    """Every stage name a manifest can carry (the values are what responses show)."""

    ROUTE_ENTITIES = "route.entities"
    CANDIDATES_FULLTEXT = "candidates.fulltext"
    CANDIDATES_VECTOR = "candidates.vector"
    FUSE = "fuse"
    EXPAND = "expand"
    FETCH = "fetch"  # the scoped fetch, as named when it runs out of time ...
    FETCH_FRESHNESS = "fetch+freshness"  # ... and once the fetched chunks are ranked
    RELEVANCE = "relevance"
    OUTPUT_GATE = "output_gate"  # the gate, as named when it runs out of time ...
    PACK_GATE = "pack+gate"  # ... and once the gated bundle is packed
    TEXT2CYPHER = "text2cypher"
    TEXT2CYPHER_SCHEMA = "text2cypher.schema"
    TEXT2CYPHER_LLM = "text2cypher.llm"
    TEXT2CYPHER_RUN = "text2cypher.run"
    LLM_REWRITE = "llm.rewrite"  # the optional LLM stages (graphctx.retrieve.assist)
    LLM_ROUTE = "llm.route"
    LLM_RERANK = "llm.rerank"
    EMBEDDING_RERANK = "embedding.rerank"  # the offline alternative to llm.rerank

    @classmethod
    def candidates(cls, retriever: RetrieverName) -> Stage:
        return cls(f"candidates.{retriever.value}")


@dataclass(frozen=True)
class StageRun(Generic[T]):
    """A stage's value (None unless it finished), its report, and the error it absorbed."""

    value: T | None
    report: StageReport
    error: GraphctxError | None = None

    @property
    def timed_out(self) -> bool:
        return self.report.status is StageStatus.TIMED_OUT


def stage_report(
    name: Stage,
    status: StageStatus,
    started: float,
    count: int = 0,
    detail: str | None = None,
    budget_ms: int | None = None,
) -> StageReport:
    """The report of a stage that started at ``started`` (monotonic) and ends now."""
    return StageReport(
        stage=name.value,
        status=status,
        elapsed_ms=int((time.monotonic() - started) * 1000),
        budget_ms=budget_ms,
        candidates=count,
        detail=detail,
    )


def _size(value: object) -> int:
    return len(value) if isinstance(value, Sized) else 0


async def run_stage(
    name: Stage,
    deadline_at: float | None,
    work: Awaitable[T],
    *,
    started: float | None = None,
    count: Callable[[T], int] = _size,
    detail: Callable[[T], str | None] | None = None,
    out_of_time: str | Callable[[], str] | None = OUT_OF_TIME,
    with_budget: bool = False,
    absorb: type[GraphctxError] | tuple[type[GraphctxError], ...] = GraphctxError,
) -> StageRun[T]:
    """Await ``work`` and report it as stage ``name``.

    ``deadline_at`` bounds the waiting (see :func:`~graphctx.retrieve.deadline.within`);
    None when the work bounds itself (it raises StageTimeout at its own deadline).
    ``started`` backdates the stage (it began before this call); ``count`` and ``detail``
    describe a finished value; ``out_of_time`` is the timed-out report's detail (a callable
    is asked at that moment); ``with_budget`` reports the slice the stage had; errors of
    the ``absorb`` types become a ``failed`` report, others propagate.
    """
    began = time.monotonic() if started is None else started
    budget_ms = (
        max(0, int((deadline_at - began) * 1000))
        if with_budget and deadline_at is not None
        else None
    )
    try:
        value = await (work if deadline_at is None else within(deadline_at, work))
    except StageTimeout:
        said = out_of_time() if callable(out_of_time) else out_of_time
        return StageRun(None, stage_report(name, StageStatus.TIMED_OUT, began, 0, said, budget_ms))
    except absorb as exc:
        failed = stage_report(name, StageStatus.FAILED, began, 0, exc.code, budget_ms)
        return StageRun(None, failed, exc)
    said = None if detail is None else detail(value)
    return StageRun(value, stage_report(name, StageStatus.OK, began, count(value), said, budget_ms))
