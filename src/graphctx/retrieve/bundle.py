"""The one retrieval tail: fetched candidates -> freshness -> relevance -> pack -> output gate.

Both retrieval paths (search + graph, and text2cypher) end here with what they
:class:`Fetched`: candidates in rank order and the visible chunks the scoped fetch returned
for them. The tail ranks those by freshness, checks (search only) that they bear on the
query, packs them into the budget and has the output gate re-check every packed chunk before
anything leaves. It returns the packed bundle, or why there is none, with its :class:`Trail`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from graphctx.context import PackResult, TokenCounter, pack_to_budget
from graphctx.context.text_memo import text_memo_partitions
from graphctx.contract import (
    ContextRequest,
    Denial,
    DenialReason,
    StageStatus,
    UnanswerableReason,
)
from graphctx.retrieve.assemble import RankedEvidence, Trail
from graphctx.retrieve.deadline import Deadline
from graphctx.retrieve.freshness import classify_freshness, meets_requirement
from graphctx.retrieve.fusion import FusedCandidate
from graphctx.retrieve.gate import verify_visible
from graphctx.retrieve.relevance import assess_relevance
from graphctx.retrieve.stages import Stage, run_stage, stage_report
from graphctx.store.port import GraphStore
from graphctx.store.records import ChunkView, PathStep

__all__ = ["Ending", "Fetched", "finish_bundle"]

Ending = PackResult[RankedEvidence] | UnanswerableReason


@dataclass(frozen=True)
class Fetched:
    """What a retrieval path hands the tail."""

    candidates: Sequence[FusedCandidate]  # in rank order
    views: Sequence[ChunkView]  # the visible chunks among them (the scoped fetch)
    started: float  # when the fetch began (monotonic): the fetch+freshness report's start
    paths: Mapping[str, tuple[PathStep, ...]] = field(default_factory=dict)  # graph-reached
    named_entities: int | None = None  # for the relevance check; None: no check


async def finish_bundle(
    store: GraphStore,
    counter: TokenCounter,
    request: ContextRequest,
    scopes: frozenset[str],
    deadline: Deadline,
    fetched: Fetched,
) -> tuple[Ending, Trail]:
    # The text memos of relevance and packing keep each chunk's work under its namespace and
    # scopes: a hit reuses only work on a chunk this caller can see (graphctx.context.text_memo).
    partitions = {v.text: (request.namespace, v.scopes) for v in fetched.views}
    with text_memo_partitions(partitions):
        ranked, dropped = rank_fresh(fetched, request)
        trail = Trail(
            stages=(
                stage_report(Stage.FETCH_FRESHNESS, StageStatus.OK, fetched.started, len(ranked)),
            ),
            dropped_for_freshness=dropped,
        )
        if not ranked:
            return (
                UnanswerableReason.FRESHNESS_UNMET if dropped else UnanswerableReason.NO_EVIDENCE
            ), trail
        if fetched.named_entities is not None:
            started = time.monotonic()
            relevance = assess_relevance(
                request.query,
                [r.view.text for r in ranked],
                named_entities=fetched.named_entities,
                indexed={
                    r.view.text: r.view.text_terms for r in ranked if r.view.text_terms is not None
                },
            )
            report = stage_report(
                Stage.RELEVANCE, StageStatus.OK, started, len(ranked), relevance.explain()
            )
            trail += Trail(stages=(report,))
            if not relevance.answerable:
                return UnanswerableReason.NO_EVIDENCE, trail
        ending, gated = await pack_and_gate(store, counter, request, scopes, deadline, ranked)
        return ending, trail + gated


def rank_fresh(fetched: Fetched, request: ContextRequest) -> tuple[list[RankedEvidence], int]:
    """The candidates that have a visible chunk and meet the freshness requirement, in rank
    order (the packer presents stale ones after the rest), and how many were dropped for
    freshness."""
    visible = {v.chunk_id: v for v in fetched.views}
    now = datetime.now(UTC)
    ranked: list[RankedEvidence] = []
    dropped = 0
    for candidate in fetched.candidates:
        view = visible.get(candidate.chunk_id)
        if view is None:
            continue
        freshness = classify_freshness(view, now)
        if not meets_requirement(view, freshness, request.freshness_required_at):
            dropped += 1
            continue
        path = fetched.paths.get(candidate.chunk_id)
        ranked.append(RankedEvidence(view, candidate, freshness, path, rank=len(ranked)))
    return ranked, dropped


async def pack_and_gate(
    store: GraphStore,
    counter: TokenCounter,
    request: ContextRequest,
    scopes: frozenset[str],
    deadline: Deadline,
    ranked: list[RankedEvidence],
) -> tuple[Ending, Trail]:
    """Pack; the output gate re-reads every packed chunk; what it withholds is packed again
    without. Fails closed: a gate that runs out of time lets nothing leave."""
    started = time.monotonic()
    packed = pack_to_budget(ranked, request.max_tokens, counter)
    gate = await run_stage(
        Stage.OUTPUT_GATE,
        None,  # the gate bounds its own read (never less than GATE_MIN_S)
        verify_visible(
            store,
            request.namespace,
            [block.evidence.view for block in packed.blocks],
            scopes,
            deadline.gate_at(),
            request.trace_id,
        ),
        started=started,
        absorb=(),
    )
    if gate.value is None:
        # The bundle says the deadline (not the ACL) emptied it.
        return UnanswerableReason.DEADLINE_EXCEEDED, Trail(stages=(gate.report,))
    visible, withheld = gate.value
    denied: tuple[Denial, ...] = ()
    if withheld:
        denied = (
            Denial(
                stage=Stage.OUTPUT_GATE.value,
                reason=DenialReason.NOT_VISIBLE_AT_OUTPUT,
                count=withheld,
            ),
        )
        keep = {v.chunk_id for v in visible}
        packed = pack_to_budget(
            [r for r in ranked if r.view.chunk_id in keep], request.max_tokens, counter
        )
    trail = Trail(
        stages=(
            stage_report(
                Stage.PACK_GATE, StageStatus.OK, started, len(packed.blocks), packed.explain()
            ),
        ),
        denied=denied,
        packing_drops=dict(packed.dropped),
    )
    reason = packed.unanswerable_reason
    if reason is not None:
        return (UnanswerableReason.ALL_DENIED if withheld else reason), trail
    return packed, trail
