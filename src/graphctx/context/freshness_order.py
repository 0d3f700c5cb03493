"""Stale evidence is selected on relevance and presented after every current item.

Two steps around the budget-exact selection of :mod:`.packing`:

- **before selection**, :func:`prefer_current_twins`: a current item that is a near duplicate
  of a better-ranked stale item (a superseded text and its successor, worded almost the same)
  is visited just before that stale item, so the current version takes the place the pair
  earned and the stale one is then dropped as its ``near_duplicate``. Without it, relevance
  order would pack the stale wording and drop the current one as the duplicate.
- **after selection**, :func:`present_current_first`: the packed blocks are put in their
  presentation order — every block that is not stale, then every stale block, each group in
  its packed order — and numbered ``S1..Sn`` in that order. A block's cost includes its
  citation id, so the blocks are charged again under their new ids: when the total still fits
  (it does whenever the tokenizer counts the id apart from the text, as every real one does)
  the selection is unchanged; otherwise blocks are fitted again in presentation order, never
  longer than selected, and what no longer fits (stale blocks first, as they come last) is cut
  or dropped as ``over_budget``/``too_small``. The budget is therefore exact after renumbering.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from graphctx.context.blocks import CachedCounter, fit_block
from graphctx.context.evidence import PackableEvidence, PackedBlock, PackingPolicy
from graphctx.context.minhash import LazySignature
from graphctx.contract import Freshness

__all__ = ["Presentation", "prefer_current_twins", "present_current_first"]

E = TypeVar("E", bound=PackableEvidence)


def _stale(item: PackableEvidence) -> bool:
    return item.freshness is Freshness.STALE


def _signature(
    item: PackableEvidence, policy: PackingPolicy, signatures: dict[str, LazySignature]
) -> LazySignature:
    signature = signatures.get(item.evidence_id)
    if signature is None:
        signature = signatures[item.evidence_id] = LazySignature(item.text, policy.shingle_chars)
    return signature


def _mergeable(a: PackableEvidence, b: PackableEvidence) -> bool:
    """As in ``dedup``: two versions of one document are never near duplicates."""
    return not (a.document_id == b.document_id and a.document_version != b.document_version)


def prefer_current_twins(
    items: Sequence[E], policy: PackingPolicy, signatures: dict[str, LazySignature]
) -> tuple[list[E], int]:
    """``items`` (selection order) with each current near duplicate of a better-ranked stale
    item moved just before the first such stale item; and how many were moved."""
    stale_at = [index for index, item in enumerate(items) if _stale(item)]
    if not stale_at:
        return list(items), 0
    stale = [_signature(items[i], policy, signatures) for i in stale_at]
    stale_heads = np.stack([signature.head_argmins for signature in stale])
    keys: list[tuple[int, int, int]] = []
    moved = 0
    for index, item in enumerate(items):
        anchor = index
        earlier = bisect.bisect_left(stale_at, index)  # stale items ranked before this one
        if not _stale(item) and earlier:
            mine = _signature(item, policy, signatures)
            bounds = np.count_nonzero(mine.holds(stale_heads[:earlier]), axis=1).tolist()
            for row, bound in enumerate(bounds):
                if _mergeable(item, items[stale_at[row]]) and mine.reaches(
                    stale[row], policy.near_duplicate_threshold, bound
                ):
                    anchor = stale_at[row]
                    moved += 1
                    break
        keys.append((anchor, 0, index) if anchor != index else (index, 1, index))
    order = sorted(range(len(items)), key=lambda i: keys[i])
    return [items[i] for i in order], moved


@dataclass(frozen=True)
class Presentation(Generic[E]):
    blocks: tuple[PackedBlock[E], ...]
    used_tokens: int
    dropped: Counter[str]
    stale_moved: int  # stale blocks that were selected before a current one and now follow it


def present_current_first(
    blocks: Sequence[PackedBlock[E]],
    budget: int,
    counter: CachedCounter,
    policy: PackingPolicy,
) -> Presentation[E]:
    """The selected blocks in presentation order, numbered ``S1..Sn``, within ``budget``."""
    ordered = [b for b in blocks if not _stale(b.evidence)] + [
        b for b in blocks if _stale(b.evidence)
    ]
    moved = sum(
        1
        for n, block in enumerate(blocks)
        if _stale(block.evidence) and any(not _stale(b.evidence) for b in blocks[n + 1 :])
    )
    if not moved:
        return Presentation(tuple(blocks), sum(b.tokens for b in blocks), Counter(), 0)
    dropped: Counter[str] = Counter()
    placed: list[PackedBlock[E]] = []
    used = 0
    for block in ordered:
        fitted = fit_block(
            block.evidence,
            f"S{len(placed) + 1}",
            budget - used,
            counter,
            policy,
            longest=len(block.content),
        )
        if isinstance(fitted, PackedBlock):
            placed.append(fitted)
            used += fitted.tokens
        else:
            dropped[fitted] += 1
    return Presentation(tuple(placed), used, dropped, moved)
