"""One evidence block fitted to the room left: whole, cut at a safe boundary, or not at all.

Every packing pass (selection, then presentation) charges a block for its rendered form —
content plus its ``<source id="Sn">`` tags — with the citation id it will carry, so the sum of
block costs is exactly what the rendered context spends.

Whether a rendered form fits is decided by its exact count, except where the counter's floor
(:class:`~graphctx.context.tokens.FlooredTokenCounter`, a bound the exact count never goes
below) is already over the room: then it cannot fit, and it is not counted. Once the budget
is nearly full that is most of what the packer tries (every later candidate, whole, then the
prefixes the binary search probes); the answer to every "does it fit" is the same, so the
blocks, cuts and drops are too, and every charged cost is still an exact count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from graphctx.context.delimiters import PrefixNeutraliser
from graphctx.context.evidence import DropReason, PackableEvidence, PackedBlock, PackingPolicy
from graphctx.context.rendering import render_neutralised_block
from graphctx.context.token_floor import counted_words, split_not_white_space
from graphctx.context.tokens import FlooredTokenCounter, TokenCounter, WordFlooredTokenCounter
from graphctx.context.truncation import cuts_start_at, fit_prefix, safe_cut_points

__all__ = ["CachedCounter", "fit_block"]

E = TypeVar("E", bound=PackableEvidence)


@dataclass
class CachedCounter:
    """Token counts and delimiter neutralisers, each computed once per text per packing call."""

    counter: TokenCounter
    cache: dict[str, int] = field(default_factory=dict)
    neutralisers: dict[str, PrefixNeutraliser] = field(default_factory=dict)
    floored: FlooredTokenCounter | None = field(default=None, init=False)
    by_words: bool = field(default=False, init=False)  # counts pretoken_floor bounds

    def __post_init__(self) -> None:
        if isinstance(self.counter, FlooredTokenCounter):
            self.floored = self.counter
        if isinstance(self.counter, WordFlooredTokenCounter):
            self.by_words = self.counter.floors_by_words

    def count(self, text: str) -> int:
        cached = self.cache.get(text)
        if cached is None:
            cached = self.cache[text] = self.counter.count(text)
        return cached

    def within(self, text: str, limit: int) -> bool:
        """``count(text) <= limit``, without counting when the floor already exceeds it."""
        floored = self.floored
        if floored is not None and text not in self.cache and floored.floor(text) > limit:
            return False
        return self.count(text) <= limit

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
    if counter.by_words and _prefix_floor(item, citation_id, size) > limit:
        return DropReason.OVER_BUDGET  # no content it may show fits: none is tried

    rendered: dict[int, str] = {}  # by prefix length
    neutraliser = counter.neutraliser(item.text)  # every content below is a prefix of it

    def render(content: str) -> str:
        known = rendered.get(len(content))
        if known is None:
            neutralised = neutraliser.prefix(len(content))
            known = rendered[len(content)] = render_neutralised_block(
                citation_id, neutralised, item.freshness
            )
        return known

    def fits(content: str) -> bool:
        return counter.within(render(content), limit)

    shown = item.text[:size]
    if fits(shown):
        return PackedBlock(
            citation_id,
            item,
            shown,
            item.start_char,
            item.start_char + size,
            counter.count(render(shown)),
            truncated=size < len(item.text),
        )
    cuts = safe_cut_points(item.text) if longest is None else _cuts_within(item.text, size)
    cut = fit_prefix(item.text, fits, cuts)
    if cut == 0:
        return DropReason.OVER_BUDGET
    content = item.text[:cut]
    if counter.within(content, policy.min_block_tokens - 1):
        return DropReason.TOO_SMALL
    return PackedBlock(
        citation_id,
        item,
        content,
        item.start_char,
        item.start_char + cut,
        counter.count(render(content)),  # counted: fit_prefix found it fits
        truncated=True,
    )


def _prefix_floor(item: PackableEvidence, citation_id: str, size: int) -> int:
    """At most the token count of the block of every content :func:`fit_block` may try
    (``text[:size]``, or a safe cut below ``size``), for a counter whose counts
    :func:`~.token_floor.pretoken_floor` bounds.

    Every such content holds ``text[:shortest]`` (:func:`~.truncation.cuts_start_at`). A
    block's floor is at least the counted words of its tags plus those of its neutralised
    content, less the characters ``str.split()`` cuts at although they are not whitespace
    (the tags end and begin with a newline, so the words add up). Neutralising replaces
    characters that are neither whitespace nor ``/`` with ``&lt;`` or ``&#91;``: the content
    counts as many words as it did, at least as many as ``text[:shortest]``
    (:func:`~.token_floor.counted_words` never decreases as text is appended), and has no
    more of those characters than the whole text.
    """
    text = item.text
    shortest = min(size, cuts_start_at(text))
    tags = counted_words(render_neutralised_block(citation_id, "", item.freshness))
    return tags + counted_words(text[:shortest]) - split_not_white_space(text)


def _cuts_within(text: str, size: int) -> list[int]:
    return [point for point in safe_cut_points(text) if point < size]
