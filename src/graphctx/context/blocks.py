"""One evidence block fitted to the room left: whole, cut at a safe boundary, or not at all.

Every packing pass (selection, then presentation) charges a block for its rendered form —
content plus its ``<source id="Sn">`` tags — with the citation id it will carry, so the sum of
block costs is exactly what the rendered context spends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from graphctx.context.delimiters import PrefixNeutraliser
from graphctx.context.evidence import DropReason, PackableEvidence, PackedBlock, PackingPolicy
from graphctx.context.rendering import render_neutralised_block
from graphctx.context.tokens import TokenCounter
from graphctx.context.truncation import fit_prefix, safe_cut_points

__all__ = ["CachedCounter", "fit_block"]

E = TypeVar("E", bound=PackableEvidence)


@dataclass
class CachedCounter:
    """Token counts and delimiter neutralisers, each computed once per text per packing call."""

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


def fit_block(
    item: E,
    citation_id: str,
    remaining: int,
    counter: CachedCounter,
    policy: PackingPolicy,
    longest: int | None = None,
) -> PackedBlock[E] | DropReason:
    """``item`` as block ``citation_id`` within ``remaining`` tokens, showing at most its first
    ``longest`` characters (default: all of it); a cut lands on a safe boundary of the
    evidence's own text, so its span stays exact."""
    limit = (
        remaining if policy.max_block_tokens is None else min(remaining, policy.max_block_tokens)
    )
    if limit <= 0:
        return DropReason.OVER_BUDGET
    size = len(item.text) if longest is None else min(longest, len(item.text))

    costs: dict[int, int] = {}  # by prefix length: the last probe of fit_prefix is the cut
    neutraliser = counter.neutraliser(item.text)  # every content below is a prefix of it

    def cost(content: str) -> int:
        known = costs.get(len(content))
        if known is None:
            neutralised = neutraliser.prefix(len(content))
            rendered = render_neutralised_block(citation_id, neutralised, item.freshness)
            known = costs[len(content)] = counter.count(rendered)
        return known

    shown = item.text[:size]
    whole = cost(shown)
    if whole <= limit:
        return PackedBlock(
            citation_id,
            item,
            shown,
            item.start_char,
            item.start_char + size,
            whole,
            truncated=size < len(item.text),
        )
    cuts = safe_cut_points(item.text) if longest is None else _cuts_within(item.text, size)
    cut = fit_prefix(item.text, lambda content: cost(content) <= limit, cuts)
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


def _cuts_within(text: str, size: int) -> list[int]:
    return [point for point in safe_cut_points(text) if point < size]
