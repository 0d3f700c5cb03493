"""``pack_to_budget``: deterministic, budget-exact selection of evidence blocks.

1. Drop unusable evidence and repeated ids; survivors are in ``evidence_sort_key`` order
   (stale evidence after all other evidence, then by rank), which every later step keeps.
2. Greedy packing in that order, skipping overlapping spans and near duplicates of what is
   already packed (see ``dedup``), each block charged for its rendered form (tags included):
   a block that does not fit is cut at the last safe boundary that fits, or skipped; a skip
   never stops the packer from trying the rest. Caps: ``max_blocks`` and
   ``max_blocks_per_document``.
3. If that first pass had to cut or skip anything for room, the budget is tight: pack again,
   visiting first the evidence that carries information of its own (no claim id, the best
   support of its claim, or evidence on the graph path that links the answer) and only then
   further support for claims already covered. Citation ids follow the packed order.

The same evidence in any input order gives an identical result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from graphctx.context.dedup import DuplicateFilter, drop_unusable_and_repeated
from graphctx.context.delimiters import PrefixNeutraliser
from graphctx.context.evidence import (
    DEFAULT_PACKING_POLICY,
    DropReason,
    PackableEvidence,
    PackedBlock,
    PackingPolicy,
    PackResult,
)
from graphctx.context.minhash import MinHashSignature
from graphctx.context.rendering import render_neutralised_block
from graphctx.context.tokens import TokenCounter
from graphctx.context.truncation import fit_prefix
from graphctx.contract import Freshness

__all__ = ["pack_to_budget"]

E = TypeVar("E", bound=PackableEvidence)

_ROOM_REASONS = (DropReason.OVER_BUDGET, DropReason.TOO_SMALL, DropReason.MAX_BLOCKS)


@dataclass
class _CachedCounter:
    """Token counts and delimiter neutralisers, each computed once per text per packing."""

    counter: TokenCounter
    cache: dict[str, int] = field(default_factory=dict)
    neutralisers: dict[str, PrefixNeutraliser] = field(default_factory=dict)

    def count(self, text: str) -> int:
        cached = self.cache.get(text)
        if cached is None:
            cached = self.cache[text] = self.counter.count(text)
        return cached

    def neutraliser(self, text: str) -> PrefixNeutraliser:
        found = self.neutralisers.get(text)
        if found is None:
            found = self.neutralisers[text] = PrefixNeutraliser(text)
        return found


@dataclass
class _Pass(Generic[E]):
    blocks: list[PackedBlock[E]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    used: int = 0
    truncated_any: bool = False


def _priority_order(items: Sequence[E]) -> list[E]:
    """Evidence with information of its own first, redundant claim support after it; stale
    evidence stays after all other evidence (see ``evidence_sort_key``)."""
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
    return sorted(first + redundant, key=lambda item: item.freshness is Freshness.STALE)


def _pack_once(
    items: Sequence[E],
    budget: int,
    counter: _CachedCounter,
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
        block = _fit_block(item, f"S{len(state.blocks) + 1}", budget - state.used, counter, policy)
        if isinstance(block, DropReason):
            state.dropped[block] += 1
            continue
        duplicates.add(item, block.content, block.start_char, block.end_char)
        state.blocks.append(block)
        state.used += block.tokens
        state.truncated_any = state.truncated_any or block.truncated
        per_document[item.document_id] += 1
    return state


def _fit_block(
    item: E,
    citation_id: str,
    remaining: int,
    counter: _CachedCounter,
    policy: PackingPolicy,
) -> PackedBlock[E] | DropReason:
    limit = (
        remaining if policy.max_block_tokens is None else min(remaining, policy.max_block_tokens)
    )
    if limit <= 0:
        return DropReason.OVER_BUDGET

    costs: dict[int, int] = {}  # by prefix length: the last probe of fit_prefix is the cut
    neutraliser = counter.neutraliser(item.text)  # every content below is a prefix of it

    def cost(content: str) -> int:
        known = costs.get(len(content))
        if known is None:
            neutralised = neutraliser.prefix(len(content))
            rendered = render_neutralised_block(citation_id, neutralised, item.freshness)
            known = costs[len(content)] = counter.count(rendered)
        return known

    whole = cost(item.text)
    if whole <= limit:
        return PackedBlock(
            citation_id, item, item.text, item.start_char, item.end_char, whole, truncated=False
        )
    cut = fit_prefix(item.text, lambda content: cost(content) <= limit)
    if cut == 0:
        return DropReason.OVER_BUDGET
    content = item.text[:cut]
    if counter.count(content) < policy.min_block_tokens:
        return DropReason.TOO_SMALL
    return PackedBlock(
        citation_id,
        item,
        content,
        item.start_char,
        item.start_char + cut,
        cost(content),
        truncated=True,
    )


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
    survivors = drop_unusable_and_repeated(evidence, dropped)
    cached = _CachedCounter(counter)
    signatures: dict[str, MinHashSignature] = {}
    packed = _pack_once(survivors, budget, cached, policy, DuplicateFilter(policy, signatures))
    tight = packed.truncated_any or any(packed.dropped[r] for r in _ROOM_REASONS)
    if tight:
        prioritised = _priority_order(survivors)
        if prioritised != survivors:
            duplicates = DuplicateFilter(policy, signatures)
            packed = _pack_once(prioritised, budget, cached, policy, duplicates)
    dropped.update(packed.dropped)
    return PackResult(
        blocks=tuple(packed.blocks),
        used_tokens=packed.used,
        dropped={str(reason): count for reason, count in dropped.items()},
        source_map={block.citation_id: block.source_ref() for block in packed.blocks},
        budget_tokens=budget,
        counter_name=counter.name,
        candidates=len(evidence),
    )
