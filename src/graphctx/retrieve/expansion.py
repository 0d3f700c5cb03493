"""The graph expansion stage: from fused anchors and named entities to more evidence.

Anchors are the top fused candidates (score relative to the best one); seeds are the
entities the query names. The store walks the graph with the request's scopes checked at
every step (``GraphStore.expand`` / ``neighbourhood``); this module picks the policy by
question type, runs both walks within the stage's deadline, and returns each reached chunk's
propagated score (anchors' and seeds' support combined as 1 - prod(1 - s)) plus the path by
which it was reached. Nothing found is data: the caller keeps the plain hybrid ranking.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from graphctx.contract import StageReport, StageStatus
from graphctx.retrieve.fusion import FusedCandidate, relative_scores
from graphctx.retrieve.question_type import QuestionClass, QuestionType
from graphctx.retrieve.stages import Stage, run_stage, stage_report
from graphctx.store.graph_walk import combine_support
from graphctx.store.port import GraphStore
from graphctx.store.records import (
    ChunkHit,
    Direction,
    Expansion,
    ExpansionPolicy,
    ExpansionResult,
    PathStep,
)

__all__ = [
    "ANCHOR_COUNT",
    "ANCHOR_MIN_RELATIVE",
    "POLICIES",
    "SEED_LIMIT",
    "SEED_NODE_LIMIT",
    "GraphExpansion",
    "expand_graph",
    "policy_for",
    "walk_anchors",
]

ANCHOR_COUNT: Final = 3  # at most this many top fused candidates are expanded from ...
ANCHOR_MIN_RELATIVE: Final = 0.5  # ... and only those with this share of the best fused score
SEED_LIMIT: Final = 5  # names in the query whose entities' neighbourhoods are walked ...
SEED_NODE_LIMIT: Final = 20  # ... with at most this many nodes in all (a name may match several)
SEED_WEIGHT: Final = 1.0  # a named entity's chunks, relative to the best search hit

# Every question type walks one hop (the router decides from the evidence whether the walk's
# ranking is used); calculations follow chains two hops deep.
POLICIES: Final[Mapping[QuestionType, ExpansionPolicy]] = {
    QuestionType.SIMPLE_LOOKUP: ExpansionPolicy(max_hops=1),
    QuestionType.PROCEDURE: ExpansionPolicy(max_hops=1),
    QuestionType.RIGHT: ExpansionPolicy(max_hops=1),
    QuestionType.CALCULATION: ExpansionPolicy(max_hops=2, max_fanout=6),
    QuestionType.RELATIONAL: ExpansionPolicy(max_hops=1),
    QuestionType.GENERAL: ExpansionPolicy(max_hops=1),
}


def policy_for(question: QuestionClass) -> ExpansionPolicy:
    """The question type's expansion policy (the same in every mode that expands)."""
    return POLICIES[question.type]


@dataclass(frozen=True)
class GraphExpansion:
    """What the stage found: propagated scores, paths, withheld count, its report."""

    hits: list[ChunkHit]  # propagated score per reached chunk, best first
    paths: dict[str, tuple[PathStep, ...]]
    withheld: int
    report: StageReport
    hops: dict[str, int] = field(default_factory=dict)
    anchors: tuple[str, ...] = ()  # the fused candidates expanded from, best first
    supported: dict[str, int] = field(default_factory=dict)  # anchors + seeds reaching a chunk

    @property
    def scores(self) -> dict[str, float]:
        return {h.chunk_id: h.score for h in self.hits}


def anchors_from(
    fused: Sequence[FusedCandidate],
    count: int = ANCHOR_COUNT,
    min_relative: float = ANCHOR_MIN_RELATIVE,
) -> dict[str, float]:
    """Confident fused candidates to propagate from, each weighted by its relative score.

    Fusion is calibrated (a weak list has little say), so a candidate's share of the best
    fused score is its confidence; the best candidate is always an anchor.
    """
    relative = relative_scores(fused[:count])
    return {
        c.chunk_id: relative[c.chunk_id]
        for position, c in enumerate(fused[:count])
        if position == 0 or relative[c.chunk_id] >= min_relative
    }


def walk_anchors(
    fused: Sequence[FusedCandidate],
    seeds: Sequence[str],
    question: QuestionClass,
    policy: ExpansionPolicy | None = None,
) -> dict[str, float]:
    """The anchors :func:`expand_graph` walks from: none when the policy walks no hop or a
    relational question names entities (answered from their neighbourhood alone)."""
    chosen = policy or policy_for(question)
    relational = question.type is QuestionType.RELATIONAL and bool(seeds)
    return anchors_from(fused) if chosen.max_hops > 0 and not relational else {}


async def _both(
    first: Coroutine[Any, Any, ExpansionResult], second: Coroutine[Any, Any, ExpansionResult]
) -> tuple[ExpansionResult, ExpansionResult]:
    """Both walks; when one fails (or the stage is cancelled) the other is cancelled too,
    so no walk outlives its stage."""
    tasks = (asyncio.ensure_future(first), asyncio.ensure_future(second))
    try:
        one, two = await asyncio.gather(*tasks)
        return one, two
    finally:
        for task in tasks:
            task.cancel()


async def expand_graph(
    store: GraphStore,
    namespace: str,
    fused: Sequence[FusedCandidate],
    seeds: Sequence[str],
    question: QuestionClass,
    scopes: frozenset[str],
    deadline_at: float,
    *,
    policy: ExpansionPolicy | None = None,
    namesakes: Sequence[Sequence[str]] = (),
) -> GraphExpansion:
    """Expand from anchors (by the question's policy) and from seed entities, in parallel.

    A relational question that names entities is answered from their neighbourhood alone.
    ``namesakes`` lists groups of seeds one query name resolves to (see :func:`seed_shares`).
    """
    started = time.monotonic()
    chosen = policy or policy_for(question)
    anchors = walk_anchors(fused, seeds, question, chosen)
    neighbourhood_policy = replace(
        chosen,
        max_hops=1,
        forward_only=frozenset(),  # "what is connected to X" includes what cites X
        direction=question.direction
        if question.type is QuestionType.RELATIONAL
        else Direction.BOTH,
    )

    async def from_anchors() -> ExpansionResult:
        if not anchors:
            return ExpansionResult(())
        return await store.expand(namespace, anchors, scopes, chosen, deadline_at)

    async def from_seeds() -> ExpansionResult:
        if not seeds:
            return ExpansionResult(())
        return await store.neighbourhood(
            namespace, list(seeds)[:SEED_NODE_LIMIT], scopes, neighbourhood_policy, deadline_at
        )

    if not anchors and not seeds:
        skipped = stage_report(
            Stage.EXPAND,
            StageStatus.SKIPPED,
            started,
            detail="nothing to expand",
            budget_ms=max(0, int((deadline_at - started) * 1000)),
        )
        return GraphExpansion([], {}, 0, skipped)

    relative = relative_scores(fused)

    async def walk() -> _Reached:
        return _combine(await _both(from_anchors(), from_seeds()), relative, namesakes)

    detail = (
        f"{question.type.value}: {len(anchors)} anchor(s), {len(seeds[:SEED_NODE_LIMIT])} seed(s),"
        f" max {chosen.max_hops} hop(s)"
    )
    walked = await run_stage(
        Stage.EXPAND,
        deadline_at,
        walk(),
        started=started,
        count=lambda reached: len(reached.ordered),
        detail=lambda _: detail,
        with_budget=True,
    )
    reached = walked.value
    if reached is None:
        return GraphExpansion([], {}, 0, walked.report)
    ordered = reached.ordered
    return GraphExpansion(
        hits=[ChunkHit(e.chunk_id, reached.total[e.chunk_id]) for e in ordered],
        paths={e.chunk_id: e.path for e in ordered},
        withheld=reached.withheld,
        report=walked.report,
        hops={e.chunk_id: e.hops for e in ordered},
        anchors=tuple(anchors),
        supported={e.chunk_id: reached.support[e.chunk_id] for e in ordered},
    )


@dataclass(frozen=True)
class _Reached:
    ordered: list[Expansion]  # the best expansion per reached chunk, best first
    total: dict[str, float]  # combined propagated score per chunk
    support: dict[str, int]  # anchors + seeds reaching each chunk
    withheld: int


def seed_shares(
    seed_expansions: Sequence[Expansion],
    relative: Mapping[str, float],
    namesakes: Sequence[Sequence[str]],
) -> dict[str, float]:
    """Each seed's share of the mass of the query name that resolved to it.

    A name the query uses once resolves to one thing: when it matches several nodes (several
    documents titled "Namibia"), its mass is split among them, as personalized PageRank
    splits a query term's restart mass among its referents, in proportion to how well search
    found each one's own chunks (its best relative fused score), equally when search found
    none of them. A seed named by several names keeps its best share; a seed of a name that
    resolves to it alone keeps the whole mass (1).
    """
    found: dict[str, float] = {}
    for expansion in seed_expansions:
        if expansion.hops == 0 and expansion.path:
            seed = expansion.path[0].id
            found[seed] = max(found.get(seed, 0.0), relative.get(expansion.chunk_id, 0.0))
    shares: dict[str, float] = {}
    for group in namesakes:
        members = list(dict.fromkeys(group))
        if len(members) < 2:
            continue
        total = sum(found.get(m, 0.0) for m in members)
        for member in members:
            share = found.get(member, 0.0) / total if total > 0 else 1.0 / len(members)
            shares[member] = max(shares.get(member, 0.0), share)
    return shares


def _combine(
    walked: tuple[ExpansionResult, ExpansionResult],
    relative: Mapping[str, float],
    namesakes: Sequence[Sequence[str]] = (),
) -> _Reached:
    """Propagated scores add up: from the anchors (in their relative-score units) and from
    the entities the query names (each worth SEED_WEIGHT times its share of the name at its
    own chunks)."""
    from_anchors_result, from_seeds_result = walked
    shares = seed_shares(from_seeds_result.expansions, relative, namesakes)
    parts: dict[str, list[float]] = {}
    support: dict[str, int] = {}
    best: dict[str, Expansion] = {}
    for expansions, factor in (
        (from_anchors_result.expansions, 1.0),
        (from_seeds_result.expansions, SEED_WEIGHT),
    ):
        for expansion in expansions:
            cid = expansion.chunk_id
            seed = expansion.path[0].id if factor is SEED_WEIGHT and expansion.path else ""
            parts.setdefault(cid, []).append(factor * shares.get(seed, 1.0) * expansion.score)
            support[cid] = support.get(cid, 0) + expansion.origins
            old = best.get(cid)
            if old is None or (expansion.score, -expansion.hops) > (old.score, -old.hops):
                best[cid] = expansion
    total = {cid: combine_support(scores) for cid, scores in parts.items()}
    ordered = sorted(best.values(), key=lambda e: (-total[e.chunk_id], e.hops, e.chunk_id))
    return _Reached(ordered, total, support, sum(r.withheld for r in walked))
