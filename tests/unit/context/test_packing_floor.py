"""The packer skips counting what its counter's floor shows cannot fit, and packs the same."""

from __future__ import annotations

import pytest
from context_strategies import ENGLISH_LINES, Corpus, corpora, make_evidence, policies
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context import (
    Evidence,
    PackingPolicy,
    TokenCounter,
    blocks,
    pack_to_budget,
    truncation,
)
from graphctx.context.rendering import render_block
from graphctx.context.tokens import FlooredTokenCounter, PureTiktokenCounter, TiktokenCounter
from graphctx.contract import Freshness

FLOORED: list[FlooredTokenCounter] = [
    TiktokenCounter("o200k_base").load(),
    PureTiktokenCounter("cl100k_base").load(),
]


class Counting:
    """``counter`` counting its ``count`` calls; ``floor`` passed through only if asked."""

    def __init__(self, counter: FlooredTokenCounter) -> None:
        self.counter = counter
        self.counted: list[str] = []

    @property
    def name(self) -> str:
        return self.counter.name

    def count(self, text: str) -> int:
        self.counted.append(text)
        return self.counter.count(text)


class CountingFloored(Counting):
    def floor(self, text: str) -> int:
        return self.counter.floor(text)


@settings(max_examples=150, deadline=None)
@given(corpora(max_evidence=14), st.integers(0, 600), policies, st.sampled_from(FLOORED))
def test_packing_with_the_floor_equals_packing_by_exact_counts_alone(
    corpus: Corpus, budget: int, policy: PackingPolicy, counter: FlooredTokenCounter
) -> None:
    exact_only: TokenCounter = Counting(counter)
    assert not isinstance(exact_only, FlooredTokenCounter)
    with_floor = pack_to_budget(corpus.evidence, budget, counter, policy)
    assert with_floor == pack_to_budget(corpus.evidence, budget, exact_only, policy)


def _long_candidates() -> list[Evidence]:
    text = " ".join(ENGLISH_LINES)
    return [
        make_evidence(f"e{n}", f"Item {n}. {text} {n}", document_id=f"d{n}", rank=n)
        for n in range(12)
    ]


def test_once_the_budget_is_nearly_full_long_candidates_are_not_counted_whole() -> None:
    evidence = _long_candidates()
    policy = PackingPolicy(near_duplicate_threshold=1.0)
    plain = Counting(FLOORED[0])
    floored = CountingFloored(FLOORED[0])
    budget = 150  # the first candidate whole (~110 tokens), then too little for the others
    result = pack_to_budget(evidence, budget, floored, policy)
    assert result == pack_to_budget(evidence, budget, plain, policy)
    assert len(result.blocks) == 1
    assert result.dropped
    whole = {e.text for e in evidence[1:]}
    assert any(any(text in counted for text in whole) for counted in plain.counted)
    assert not any(any(text in counted for text in whole) for counted in floored.counted)
    assert len(floored.counted) < len(plain.counted)


def test_a_candidate_with_every_cut_over_the_room_is_not_cut_at_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evidence = [  # each first sentence is 4 words or more
        make_evidence(f"e{n}", " ".join(ENGLISH_LINES[n:]), document_id=f"d{n}", rank=n)
        for n in range(len(ENGLISH_LINES))
    ]
    policy = PackingPolicy(near_duplicate_threshold=1.0)
    counter = FLOORED[0]
    budget = counter.count(render_block("S1", evidence[0].text, Freshness.CURRENT)) + 3
    expected = pack_to_budget(evidence, budget, Counting(counter), policy)  # exact counts only
    cut: list[str] = []
    real = truncation.safe_cut_points

    def cutting(text: str) -> list[int]:
        cut.append(text)
        return real(text)

    monkeypatch.setattr(blocks, "safe_cut_points", cutting)
    result = pack_to_budget(evidence, budget, counter, policy)
    assert result == expected
    assert len(result.blocks) == 1
    assert result.dropped == {"over_budget": len(evidence) - 1}
    assert cut == []  # a first sentence and the tags are over the room: no cut is looked for
