"""The shape of a concept set, as seed 001 judges it: how many concepts for how many items
(n/10 .. n/5), how many members each, how much they overlap, and the fallback rate (the
share of items in no concept). These hold whatever the retrieval scoring does with them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["ConceptShape", "concept_bounds"]


def concept_bounds(n: int) -> tuple[int, int]:
    """n/10 .. n/5 concepts (at least one; rounded outwards), as seed 001 asks."""
    return max(1, math.floor(n / 10)), max(1, math.ceil(n / 5))


@dataclass(frozen=True)
class ConceptShape:
    """The structural properties of a concept set (they hold whatever the scoring)."""

    items: int
    concepts: int
    low: int  # n/10
    high: int  # n/5
    candidates: int  # before selection
    by_source: dict[str, int] = field(default_factory=dict)
    by_type: dict[str, int] = field(default_factory=dict)
    members_min: int = 0
    members_median: float = 0.0
    members_max: int = 0
    memberships: int = 0
    in_several: int = 0  # items in two or more concepts
    general_terms: int = 0  # defined terms used too widely to form a concept
    fallback_rate: float | None = None  # share of items in no concept

    def summary(self) -> str:
        if not self.items:
            return "no items"
        fallback = "n/a" if self.fallback_rate is None else f"{100 * self.fallback_rate:.1f}%"
        sources = ", ".join(f"{k} {v}" for k, v in sorted(self.by_source.items())) or "none"
        return (
            f"{self.concepts} concepts for n={self.items} items"
            f" (n/10..n/5 = {self.low}..{self.high}; {sources}); members per concept min/median/max"
            f" {self.members_min}/{self.members_median:g}/{self.members_max};"
            f" {self.in_several} items in 2+ concepts; fallback rate {fallback}"
        )
