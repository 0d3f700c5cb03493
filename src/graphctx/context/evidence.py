"""The packer's inputs and outputs: Evidence in; PackedBlock, SourceRef and PackResult out.

The packer reads its input through :class:`PackableEvidence`; :class:`Evidence` is the plain
implementation. Blocks and results are generic in the evidence type, so a caller that packs
its own evidence objects gets them back on the blocks (no lookup by id afterwards).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Generic, Protocol, TypeVar

from graphctx.contract import Freshness, UnanswerableReason

__all__ = [
    "DEFAULT_PACKING_POLICY",
    "DropReason",
    "Evidence",
    "PackResult",
    "PackableEvidence",
    "PackedBlock",
    "PackingPolicy",
    "SourceRef",
    "evidence_sort_key",
]


class PackableEvidence(Protocol):
    """What the packer reads of one candidate (see :class:`Evidence` for the meaning)."""

    @property
    def evidence_id(self) -> str: ...
    @property
    def document_id(self) -> str: ...
    @property
    def document_version(self) -> str: ...
    @property
    def source_uri(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def start_char(self) -> int: ...
    @property
    def end_char(self) -> int: ...
    @property
    def rank(self) -> int: ...
    @property
    def freshness(self) -> Freshness: ...
    @property
    def claim_id(self) -> str | None: ...
    @property
    def on_graph_path(self) -> bool: ...


EvidenceT = TypeVar("EvidenceT", bound=PackableEvidence, covariant=True)


@dataclass(frozen=True)
class Evidence:
    """One candidate, already ranked and ACL-checked by the caller.

    ``text`` is the chunk's full original text and ``[start_char, end_char)`` its span in the
    original document, so ``end_char - start_char == len(text)``; evidence that breaks this is
    dropped as ``invalid_span`` (a truncated span could not be exact otherwise).
    """

    evidence_id: str
    document_id: str
    document_version: str
    source_uri: str
    text: str
    start_char: int
    end_char: int
    rank: int
    freshness: Freshness
    claim_id: str | None = None
    on_graph_path: bool = False


def evidence_sort_key(
    item: PackableEvidence,
) -> tuple[int, str, str, str, int, int, str, str, str, bool, str]:
    """Total order of selection: the caller's rank, then every field as tie-breaker.

    Freshness plays no part in selection (a stale item competes on relevance); it decides
    only the presentation order (see ``freshness_order``)."""
    return (
        item.rank,
        item.evidence_id,
        item.document_id,
        item.document_version,
        item.start_char,
        item.end_char,
        item.text,
        item.source_uri,
        item.claim_id or "",
        not item.on_graph_path,
        item.freshness.value,
    )


class DropReason(StrEnum):
    """Why a candidate did not become a block. Keys of ``PackResult.dropped``."""

    INVALID_SPAN = "invalid_span"
    EMPTY = "empty"
    DUPLICATE = "duplicate"
    OVERLAPPING_SPAN = "overlapping_span"
    NEAR_DUPLICATE = "near_duplicate"
    PER_DOCUMENT_CAP = "per_document_cap"
    MAX_BLOCKS = "max_blocks"
    OVER_BUDGET = "over_budget"
    TOO_SMALL = "too_small"


# Reasons that mean "there was usable evidence, the budget or the caps left no room for it".
_ROOM_REASONS = frozenset(
    {
        DropReason.PER_DOCUMENT_CAP,
        DropReason.MAX_BLOCKS,
        DropReason.OVER_BUDGET,
        DropReason.TOO_SMALL,
    }
)


@dataclass(frozen=True)
class PackingPolicy:
    """Knobs of ``pack_to_budget``. The defaults are starting values, not tuned truths.

    - ``max_blocks_per_document``: cap per ``document_id`` (all versions together).
    - ``min_block_tokens``: a truncated fragment with fewer content tokens is not worth a block
      (whole evidence is never rejected for being short).
    - ``max_block_tokens``: optionally truncate any single block to this many tokens, so one
      long chunk cannot take the whole budget.
    - ``span_overlap_ratio``: two spans of the same document version whose overlap covers at
      least this share of the shorter one are duplicates; smaller overlaps (windowed chunking)
      are kept.
    - ``near_duplicate_threshold``: estimated Jaccard similarity of character shingles at or
      above which the lower-ranked text is a near duplicate.
    """

    max_blocks: int = 12
    max_blocks_per_document: int = 3
    min_block_tokens: int = 24
    max_block_tokens: int | None = None
    span_overlap_ratio: float = 0.5
    near_duplicate_threshold: float = 0.8
    shingle_chars: int = 5

    def __post_init__(self) -> None:
        if self.max_blocks < 1 or self.max_blocks_per_document < 1:
            raise ValueError("max_blocks and max_blocks_per_document must be at least 1")
        if self.min_block_tokens < 0:
            raise ValueError("min_block_tokens must not be negative")
        if self.max_block_tokens is not None and self.max_block_tokens < 1:
            raise ValueError("max_block_tokens must be positive")
        if not 0.0 < self.span_overlap_ratio <= 1.0:
            raise ValueError("span_overlap_ratio must be in (0, 1]")
        if not 0.0 < self.near_duplicate_threshold <= 1.0:
            raise ValueError("near_duplicate_threshold must be in (0, 1]")
        if self.shingle_chars < 1:
            raise ValueError("shingle_chars must be at least 1")


DEFAULT_PACKING_POLICY = PackingPolicy()


@dataclass(frozen=True)
class SourceRef:
    """What a citation id resolves to. Built by the server, never taken from model output."""

    citation_id: str
    evidence_id: str
    document_id: str
    document_version: str
    source_uri: str
    start_char: int
    end_char: int
    truncated: bool
    freshness: Freshness
    claim_id: str | None = None


@dataclass(frozen=True)
class PackedBlock(Generic[EvidenceT]):
    """One block of the rendered context.

    ``content == evidence.text[start_char - evidence.start_char : end_char - evidence.start_char]``
    and ``[start_char, end_char)`` is the exact span of ``content`` in the original document.
    ``tokens`` is what the block costs in the rendered context: content plus its source tags.
    """

    citation_id: str
    evidence: EvidenceT
    content: str
    start_char: int
    end_char: int
    tokens: int
    truncated: bool

    def source_ref(self) -> SourceRef:
        return SourceRef(
            citation_id=self.citation_id,
            evidence_id=self.evidence.evidence_id,
            document_id=self.evidence.document_id,
            document_version=self.evidence.document_version,
            source_uri=self.evidence.source_uri,
            start_char=self.start_char,
            end_char=self.end_char,
            truncated=self.truncated,
            freshness=self.evidence.freshness,
            claim_id=self.evidence.claim_id,
        )


@dataclass(frozen=True)
class PackResult(Generic[EvidenceT]):
    """The packed blocks in citation order, their cost, and what was dropped and why."""

    blocks: tuple[PackedBlock[EvidenceT], ...]
    used_tokens: int
    dropped: Mapping[str, int]
    source_map: Mapping[str, SourceRef]
    budget_tokens: int = 0
    counter_name: str = ""
    candidates: int = 0
    stale_presented_after: int = 0  # stale blocks selected ahead of a current one, shown after
    current_preferred: int = 0  # current items visited before a stale near duplicate of theirs

    def __post_init__(self) -> None:
        object.__setattr__(self, "dropped", MappingProxyType(dict(sorted(self.dropped.items()))))
        object.__setattr__(self, "source_map", MappingProxyType(dict(self.source_map)))

    def explain(self) -> str:
        """How the blocks were chosen and ordered, for the manifest."""
        stale = sum(1 for block in self.blocks if block.evidence.freshness is Freshness.STALE)
        parts = [
            f"{len(self.blocks)} of {self.candidates} candidate(s) selected by rank within"
            f" {self.budget_tokens} tokens ({self.used_tokens} used)"
        ]
        if stale:
            parts.append(
                f"{stale} stale block(s) presented after the {len(self.blocks) - stale} other(s)"
                f" ({self.stale_presented_after} had ranked ahead of a current one)"
            )
        if self.current_preferred:
            parts.append(
                f"{self.current_preferred} current item(s) taken before a stale near duplicate"
            )
        return "; ".join(parts)

    @property
    def unanswerable_reason(self) -> UnanswerableReason | None:
        """None when there are blocks; else ``budget_too_small`` or ``no_evidence``."""
        if self.blocks:
            return None
        if any(self.dropped.get(reason, 0) for reason in _ROOM_REASONS):
            return UnanswerableReason.BUDGET_TOO_SMALL
        return UnanswerableReason.NO_EVIDENCE
