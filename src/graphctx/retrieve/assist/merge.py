"""Pure transforms of the optional LLM stages: fuse rewrites in, apply a rerank order.

:func:`fuse_rewrites` adds each rewritten query's fused candidates to the original query's,
deterministically: a chunk's score is its relative fused score for the original query plus
``REWRITE_WEIGHT`` times its best relative score among the rewrites; ties go to the original
rank, then the chunk id. Each rewrite's contribution is the chunks it brought into the pool
and the ones it moved up. :func:`apply_order` puts the shown candidates in the model's order
in the positions they held; everything else stays where it was, so a rerank can only reorder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from graphctx.contract import RewriteContribution
from graphctx.retrieve.fusion import FusedCandidate, relative_scores

__all__ = ["REWRITE_WEIGHT", "apply_order", "fuse_rewrites"]

REWRITE_WEIGHT = 0.5  # a rewrite's vote against the original query's (which counts 1)


def fuse_rewrites(
    original: Sequence[FusedCandidate],
    rewrites: Sequence[tuple[str, Sequence[FusedCandidate]]],
    depth: int,
) -> tuple[list[FusedCandidate], list[RewriteContribution]]:
    """The merged ranking, and per rewrite what it added to / raised in its top ``depth``."""
    base = relative_scores(original)
    per_rewrite = [relative_scores(found) for _, found in rewrites]
    known = {c.chunk_id: c for c in original}
    for _, found in rewrites:
        for candidate in found:
            known.setdefault(candidate.chunk_id, candidate)
    score = {
        cid: base.get(cid, 0.0)
        + REWRITE_WEIGHT * max((r.get(cid, 0.0) for r in per_rewrite), default=0.0)
        for cid in known
    }
    first_rank = {c.chunk_id: i for i, c in enumerate(original)}
    missing = len(original)
    order = sorted(known, key=lambda cid: (-score[cid], first_rank.get(cid, missing), cid))
    merged = [replace(known[cid], fused=score[cid]) for cid in order]
    position = {cid: i for i, cid in enumerate(order)}
    top = order[:depth]
    contributions = [
        RewriteContribution(
            query=query,
            added=[cid for cid in top if cid not in first_rank and cid in found_by],
            raised=[
                cid
                for cid in top
                if cid in first_rank and cid in found_by and position[cid] < first_rank[cid]
            ],
        )
        for (query, _), found_by in zip(rewrites, per_rewrite, strict=True)
    ]
    return merged, contributions


def apply_order(
    candidates: Sequence[FusedCandidate], shown: Sequence[int], order: Sequence[int]
) -> list[FusedCandidate]:
    """``shown`` are positions in ``candidates``; ``order`` is a permutation of
    ``range(len(shown))``: the shown candidates are rearranged among their own positions."""
    if sorted(order) != list(range(len(shown))):
        raise ValueError("order must be a permutation of the shown candidates")
    result = list(candidates)
    for slot, picked in zip(shown, order, strict=True):
        result[slot] = candidates[shown[picked]]
    return result
