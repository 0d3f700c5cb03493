"""Deterministic deduplication of ranked evidence.

Up front, in ``evidence_sort_key`` order (the better-ranked item always wins):

1. unusable evidence is dropped: empty text, or a span that does not match the text length;
2. an ``evidence_id`` seen before is a ``duplicate``.

Then, while packing, each candidate is compared with the blocks *already packed* (so a
duplicate of something that did not fit is still eligible):

3. a span of the same document *version* overlapping a packed block's span by at least
   ``span_overlap_ratio`` of the shorter span is an ``overlapping_span``;
4. a text whose MinHash similarity (character shingles) to a packed text reaches
   ``near_duplicate_threshold`` is a ``near_duplicate``. Two versions of the same document are
   never merged: a changed clause is exactly what the reader must see.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from graphctx.context.evidence import (
    DropReason,
    PackableEvidence,
    PackingPolicy,
    evidence_sort_key,
)
from graphctx.context.minhash import HEAD_PERMUTATIONS, LazySignature, may_reach

__all__ = ["DuplicateFilter", "drop_unusable_and_repeated"]

E = TypeVar("E", bound=PackableEvidence)


def _unusable(item: PackableEvidence) -> DropReason | None:
    if item.start_char < 0 or item.end_char - item.start_char != len(item.text):
        return DropReason.INVALID_SPAN
    if not item.text.strip():
        return DropReason.EMPTY
    return None


@functools.cache
def _head_needed(threshold: float) -> int:
    """The fewest of a packed block's first minima reached at a candidate's residues with
    which the pair may still reach ``threshold`` (``may_reach`` grows with that count)."""
    return next(
        (n for n in range(HEAD_PERMUTATIONS + 1) if may_reach(n, HEAD_PERMUTATIONS, threshold)),
        HEAD_PERMUTATIONS + 1,
    )


def drop_unusable_and_repeated(evidence: Iterable[E], dropped: Counter[str]) -> list[E]:
    """Usable evidence with unique ids, in sort order; every drop is counted in ``dropped``."""
    kept: list[E] = []
    seen_ids: set[str] = set()
    for item in sorted(evidence, key=evidence_sort_key):
        reason = _unusable(item)
        if reason is None and item.evidence_id in seen_ids:
            reason = DropReason.DUPLICATE
        if reason is not None:
            dropped[reason] += 1
            continue
        seen_ids.add(item.evidence_id)
        kept.append(item)
    return kept


@dataclass(frozen=True)
class _Packed:
    item: PackableEvidence
    start_char: int
    end_char: int
    signature: LazySignature


@dataclass
class DuplicateFilter:
    """Span-overlap and near-duplicate checks against the blocks packed so far."""

    policy: PackingPolicy
    signatures: dict[str, LazySignature] = field(default_factory=dict)
    packed: list[_Packed] = field(default_factory=list)
    _head_rows: npt.NDArray[np.uint32] | None = field(default=None, init=False, repr=False)

    def reason(self, item: PackableEvidence) -> DropReason | None:
        for other in self.packed:
            same_version = (
                other.item.document_id == item.document_id
                and other.item.document_version == item.document_version
            )
            if same_version and self._overlap_ratio(other, item) >= self.policy.span_overlap_ratio:
                return DropReason.OVERLAPPING_SPAN
        signature = self._signature(item)
        comparable = [
            at
            for at, other in enumerate(self.packed)
            if not (
                other.item.document_id == item.document_id
                and other.item.document_version != item.document_version
            )
        ]
        if not comparable:
            return None
        # Where each comparable block's first minima are reached, against this text's shingles,
        # in one array operation: for most blocks this bound alone rules the pair out.
        heads = self._head_argmins()
        if len(comparable) < len(heads):
            heads = heads[comparable]
        head_bounds = np.count_nonzero(signature.holds(heads), axis=1)
        threshold = self.policy.near_duplicate_threshold
        for row in np.flatnonzero(head_bounds >= _head_needed(threshold)).tolist():
            if signature.reaches(
                self.packed[comparable[row]].signature, threshold, int(head_bounds[row])
            ):
                return DropReason.NEAR_DUPLICATE
        return None

    def _head_argmins(self) -> npt.NDArray[np.uint32]:
        """Where the head minima of every packed block's signature are reached, one row per
        block in packed order."""
        if self._head_rows is None or len(self._head_rows) != len(self.packed):
            self._head_rows = np.stack([packed.signature.head_argmins for packed in self.packed])
        return self._head_rows

    def add(self, item: PackableEvidence, content: str, start_char: int, end_char: int) -> None:
        """Record a packed block; a truncated block is compared by what it actually shows."""
        signature = (
            self._signature(item)
            if content == item.text
            else LazySignature(content, self.policy.shingle_chars)
        )
        self.packed.append(_Packed(item, start_char, end_char, signature))

    def _signature(self, item: PackableEvidence) -> LazySignature:
        signature = self.signatures.get(item.evidence_id)
        if signature is None:
            signature = LazySignature(item.text, self.policy.shingle_chars)
            self.signatures[item.evidence_id] = signature
        return signature

    @staticmethod
    def _overlap_ratio(packed: _Packed, item: PackableEvidence) -> float:
        overlap = min(packed.end_char, item.end_char) - max(packed.start_char, item.start_char)
        if overlap <= 0:
            return 0.0
        shorter = min(packed.end_char - packed.start_char, item.end_char - item.start_char)
        return overlap / shorter
