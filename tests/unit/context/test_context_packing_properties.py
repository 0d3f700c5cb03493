from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import replace

import pytest
from context_strategies import Corpus, corpora, documents, make_evidence, policies
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context import (
    AnswerContractError,
    AnswerPayload,
    CitationSelection,
    Evidence,
    PackingPolicy,
    PackResult,
    TokenCounter,
    default_token_counter,
    pack_to_budget,
    render_context,
    resolve_citations,
    wrapper_tokens,
)
from graphctx.context.rendering import render_block
from graphctx.context.truncation import safe_cut_points
from graphctx.contract import Freshness

COUNTER = default_token_counter()
budgets = st.integers(0, 400)
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)


def pack(corpus: Corpus, budget: int, policy: PackingPolicy) -> PackResult[Evidence]:
    return pack_to_budget(corpus.evidence, budget, COUNTER, policy)


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies)
def test_packed_tokens_never_exceed_the_budget(
    corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    result = pack(corpus, budget, policy)
    assert result.used_tokens == sum(block.tokens for block in result.blocks) <= budget
    for block in result.blocks:
        rendered = render_block(block.citation_id, block.content, block.evidence.freshness)
        assert block.tokens == COUNTER.count(rendered)


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies)
def test_rendered_context_costs_no_more_than_blocks_plus_wrapper(
    corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    result = pack(corpus, budget, policy)
    assert COUNTER.count(render_context(result.blocks)) <= (
        result.used_tokens + wrapper_tokens(COUNTER)
    )


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies)
def test_citation_ids_run_from_s1_without_gaps_and_match_the_source_map(
    corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    result = pack(corpus, budget, policy)
    ids = [block.citation_id for block in result.blocks]
    assert ids == [f"S{n}" for n in range(1, len(ids) + 1)]
    assert list(result.source_map) == ids
    for block in result.blocks:
        ref = result.source_map[block.citation_id]
        assert (ref.evidence_id, ref.start_char, ref.end_char, ref.truncated) == (
            block.evidence.evidence_id,
            block.start_char,
            block.end_char,
            block.truncated,
        )


@PROPERTY_SETTINGS
@given(st.data(), corpora(), budgets, policies)
def test_any_input_order_gives_an_identical_result(
    data: st.DataObject, corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    shuffled = data.draw(st.permutations(corpus.evidence))
    assert pack_to_budget(shuffled, budget, COUNTER, policy) == pack(corpus, budget, policy)


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies)
def test_caps_hold_and_every_candidate_is_accounted_for(
    corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    result = pack(corpus, budget, policy)
    per_document = Counter(block.evidence.document_id for block in result.blocks)
    assert all(count <= policy.max_blocks_per_document for count in per_document.values())
    assert len(result.blocks) <= policy.max_blocks
    assert len({block.evidence.evidence_id for block in result.blocks}) == len(result.blocks)
    assert len(result.blocks) + sum(result.dropped.values()) == len(corpus.evidence)


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies)
def test_every_block_slices_its_original_document_exactly(
    corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    result = pack(corpus, budget, policy)
    for block in result.blocks:
        assert corpus.original(block.evidence)[block.start_char : block.end_char] == block.content
        assert block.evidence.start_char <= block.start_char < block.end_char
        assert block.end_char <= block.evidence.end_char
        assert block.truncated == (block.content != block.evidence.text)
        if block.truncated:
            assert block.start_char == block.evidence.start_char
            fences = [
                line
                for line in block.content.split("\n")
                if line.lstrip(" ").startswith("```") and len(line) - len(line.lstrip(" ")) <= 3
            ]
            assert len(fences) % 2 == 0, "cut inside a fenced code block"
            # A GFM table row runs to the end of its line (the closing pipe is optional), so a
            # cut in a row line must fall at that line's end in the original.
            last_line = block.content.rsplit("\n", 1)[-1]
            if last_line.lstrip().startswith("|"):
                rest_of_line = corpus.original(block.evidence)[block.end_char :].split("\n", 1)[0]
                assert not rest_of_line.strip(), "cut inside a table row"


@PROPERTY_SETTINGS
@given(corpora(max_evidence=6), st.integers(1, 400), st.data())
def test_unknown_citation_ids_are_always_rejected(
    corpus: Corpus, budget: int, data: st.DataObject
) -> None:
    result = pack(corpus, budget, PackingPolicy())
    known = list(result.source_map)
    unknown = data.draw(
        st.integers(1, 10_000).map(lambda n: f"S{n}").filter(lambda s: s not in result.source_map)
    )
    chosen = data.draw(st.lists(st.sampled_from(known), max_size=3)) if known else []
    cited = [*chosen, unknown]
    payload = AnswerPayload(
        status="answered",
        answer="…",
        citations=[CitationSelection(source_id=s, claim="claim") for s in cited],
    )
    with pytest.raises(AnswerContractError) as caught:
        resolve_citations(payload, result.source_map)
    assert (caught.value.code, caught.value.unknown_ids) == ("unknown_citation_ids", (unknown,))


@PROPERTY_SETTINGS
@given(documents(), st.integers(0, 400), st.integers(0, 200), st.data())
def test_an_oversize_item_is_cut_at_a_safe_boundary_with_an_exact_span(
    document: str, offset: int, budget: int, data: st.DataObject
) -> None:
    original = "x" * offset + document
    start = offset + data.draw(st.integers(0, max(0, len(document) // 3)))
    item = make_evidence("e1", original[start:], start=start)
    result = pack_to_budget([item], budget, COUNTER, PackingPolicy(min_block_tokens=0))
    assert result.used_tokens <= budget
    assert len(result.blocks) + sum(result.dropped.values()) == 1
    for block in result.blocks:
        assert original[block.start_char : block.end_char] == block.content
        assert block.start_char == start
        if block.truncated:
            assert block.end_char - start in safe_cut_points(item.text)


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies)
def test_no_stale_block_is_packed_before_a_block_that_is_not_stale(
    corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    stale = [
        block.evidence.freshness is Freshness.STALE for block in pack(corpus, budget, policy).blocks
    ]
    assert stale == sorted(stale)


class IdSensitiveCounter:
    """A counter whose cost of a block depends on its citation id *and* its text together
    (real tokenizers count the id apart), so renumbering can change what the blocks cost."""

    name = "id-sensitive"

    def count(self, text: str) -> int:
        return COUNTER.count(text) + zlib.crc32(text.encode("utf-8")) % 7


ODD = IdSensitiveCounter()


def _presented_in_order(result: PackResult[Evidence]) -> None:
    kinds = [block.evidence.freshness is Freshness.STALE for block in result.blocks]
    assert kinds == sorted(kinds), "a stale block comes before one that is not stale"


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies, st.sampled_from([COUNTER, ODD]))
def test_after_renumbering_the_budget_is_exact_and_ids_match_the_rendered_text(
    corpus: Corpus, budget: int, policy: PackingPolicy, counter: TokenCounter
) -> None:
    result = pack_to_budget(corpus.evidence, budget, counter, policy)
    _presented_in_order(result)
    assert result.used_tokens == sum(block.tokens for block in result.blocks) <= budget
    ids = [block.citation_id for block in result.blocks]
    assert ids == [f"S{n}" for n in range(1, len(ids) + 1)]
    assert list(result.source_map) == ids
    rendered = render_context(result.blocks)
    assert re.findall(r'<source id="(S\d+)"', rendered) == ids
    for block in result.blocks:
        text = render_block(block.citation_id, block.content, block.evidence.freshness)
        assert text in rendered
        assert block.tokens == counter.count(text)
        assert corpus.original(block.evidence)[block.start_char : block.end_char] == block.content
    given_ids = {item.evidence_id for item in corpus.evidence}
    assert {block.evidence.evidence_id for block in result.blocks} <= given_ids
    assert len(result.blocks) + sum(result.dropped.values()) == len(corpus.evidence)


@PROPERTY_SETTINGS
@given(corpora(), budgets, policies)
def test_freshness_never_decides_what_is_selected_only_where_it_is_shown(
    corpus: Corpus, budget: int, policy: PackingPolicy
) -> None:
    """Marking items stale moves blocks behind the current ones; which blocks make it is the
    same as with every item current, unless a stale text has a current near duplicate (then
    the current one is preferred) or the stale marker's tokens change what fits."""
    every_current = [replace(item, freshness=Freshness.CURRENT) for item in corpus.evidence]
    roomy = 100_000
    baseline = pack_to_budget(every_current, roomy, COUNTER, policy)
    result = pack_to_budget(corpus.evidence, roomy, COUNTER, policy)
    _presented_in_order(result)
    if result.current_preferred == 0 and policy.max_block_tokens is None:
        assert sorted(b.evidence.evidence_id for b in result.blocks) == sorted(
            b.evidence.evidence_id for b in baseline.blocks
        )
