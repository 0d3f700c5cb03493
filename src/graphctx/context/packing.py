"""``pack_to_budget``: deterministic, budget-exact selection of evidence blocks.

Select on relevance under the budget, then present current evidence first:

1. Drop unusable evidence and repeated ids; survivors are in ``evidence_sort_key`` order (the
   caller's rank, freshness playing no part), which every later step keeps — except that a
   current near duplicate of a better-ranked stale item is visited just before it
   (``freshness_order.prefer_current_twins``), so the current wording wins the pair's place.
2. Greedy packing in that order, skipping overlapping spans and near duplicates of what is
   already packed (see ``dedup``), each block charged for its rendered form (tags included):
   a block that does not fit is cut at the last safe boundary that fits, or skipped; a skip
   never stops the packer from trying the rest. Caps: ``max_blocks`` and
   ``max_blocks_per_document``.
3. If that first pass had to cut or skip anything for room, the budget is tight: pack again,
   visiting first the evidence that carries information of its own (no claim id, the best
   support of its claim, or evidence on the graph path that links the answer) and only then
   further support for claims already covered.
4. Presentation (``freshness_order.present_current_first``): every stale block after every
   block that is not stale, each group in packed order; citation ids ``S1..Sn`` follow that
   order, and the blocks are charged again under their new ids so the budget stays exact.

A stale item thus competes for room on relevance like any other (a superseded answer that
matches is shown, marked stale) but never comes before a current one.
The same evidence in any input order gives an identical result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from graphctx.context.blocks import CachedCounter, fit_block
from graphctx.context.dedup import DuplicateFilter, drop_unusable_and_repeated
from graphctx.context.evidence import (
    DEFAULT_PACKING_POLICY,
    DropReason,
    PackableEvidence,
    PackedBlock,
    PackingPolicy,
    PackResult,
)
from graphctx.context.freshness_order import prefer_current_twins, present_current_first
from graphctx.context.minhash import LazySignature
from graphctx.context.tokens import TokenCounter

__all__ = ["pack_to_budget"]

E = TypeVar("E", bound=PackableEvidence)

_ROOM_REASONS = (DropReason.OVER_BUDGET, DropReason.TOO_SMALL, DropReason.MAX_BLOCKS)


@dataclass
class _Pass(Generic[E]):
    blocks: list[PackedBlock[E]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    used: int = 0
    truncated_any: bool = False


def _priority_order(items: Sequence[E]) -> list[E]:
    """Evidence with information of its own first, redundant claim support after it."""
    first: list[E] = []
    redundant: list[E] = []
    covered: set[str] = set()
    for item in items:
        if item.claim_id is None or item.on_graph_path or item.claim_id not in covered:
            first.append(item)
        else:
            redundant.append(item)
        if item.claim_id is not None:
            covered.add(item.claim_id)
    return first + redundant


def _pack_once(
    items: Sequence[E],
    budget: int,
    counter: CachedCounter,
    policy: PackingPolicy,
    duplicates: DuplicateFilter,
) -> _Pass[E]:
    state: _Pass[E] = _Pass()
    per_document: Counter[str] = Counter()
    for item in items:
        duplicate = duplicates.reason(item)
        if duplicate is not None:
            state.dropped[duplicate] += 1
            continue
        if len(state.blocks) >= policy.max_blocks:
            state.dropped[DropReason.MAX_BLOCKS] += 1
            continue
        if per_document[item.document_id] >= policy.max_blocks_per_document:
            state.dropped[DropReason.PER_DOCUMENT_CAP] += 1
            continue
        block = fit_block(item, f"S{len(state.blocks) + 1}", budget - state.used, counter, policy)
        if isinstance(block, DropReason):
            state.dropped[block] += 1
            continue
        duplicates.add(item, block.content, block.start_char, block.end_char)
        state.blocks.append(block)
        state.used += block.tokens
        state.truncated_any = state.truncated_any or block.truncated
        per_document[item.document_id] += 1
    return state


def pack_to_budget(
    evidence: Sequence[E],
    budget_tokens: int,
    counter: TokenCounter,
    policy: PackingPolicy = DEFAULT_PACKING_POLICY,
) -> PackResult[E]:
    """Pack ranked, ACL-checked evidence into at most ``budget_tokens`` rendered tokens.

    Never raises for a small budget: an empty result's ``unanswerable_reason`` tells the caller
    whether there was no evidence or no room for it.
    """
    budget = max(0, budget_tokens)
    dropped: Counter[str] = Counter()
    signatures: dict[str, LazySignature] = {}
    survivors, preferred = prefer_current_twins(
        drop_unusable_and_repeated(evidence, dropped), policy, signatures
    )
    cached = CachedCounter(counter)
    packed = _pack_once(survivors, budget, cached, policy, DuplicateFilter(policy, signatures))
    tight = packed.truncated_any or any(packed.dropped[r] for r in _ROOM_REASONS)
    if tight:
        prioritised = _priority_order(survivors)
        if prioritised != survivors:
            duplicates = DuplicateFilter(policy, signatures)
            packed = _pack_once(prioritised, budget, cached, policy, duplicates)
    dropped.update(packed.dropped)
    shown = present_current_first(packed.blocks, budget, cached, policy)
    dropped.update(shown.dropped)
    return PackResult(
        blocks=shown.blocks,
        used_tokens=shown.used_tokens,
        dropped={str(reason): count for reason, count in dropped.items()},
        source_map={block.citation_id: block.source_ref() for block in shown.blocks},
        budget_tokens=budget,
        counter_name=counter.name,
        candidates=len(evidence),
        stale_presented_after=shown.stale_moved,
        current_preferred=preferred,
    )
