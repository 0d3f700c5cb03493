from __future__ import annotations

from context_strategies import ENGLISH_LINES, KOREAN_LINES, make_evidence

from graphctx.context import (
    DropReason,
    Evidence,
    PackingPolicy,
    PackResult,
    build_manifest,
    default_token_counter,
    pack_to_budget,
)
from graphctx.context.rendering import render_block
from graphctx.contract import Freshness, UnanswerableReason

COUNTER = default_token_counter()
LOOSE = PackingPolicy(max_blocks=20, max_blocks_per_document=20, min_block_tokens=0)
ARTICLE = " ".join(KOREAN_LINES[:6])


def pack(
    evidence: list[Evidence], budget: int = 4_000, policy: PackingPolicy = LOOSE
) -> PackResult[Evidence]:
    return pack_to_budget(evidence, budget, COUNTER, policy)


def ids(result: PackResult[Evidence]) -> list[str]:
    return [block.evidence.evidence_id for block in result.blocks]


def block_cost(text: str, citation_id: str = "S1") -> int:
    return COUNTER.count(render_block(citation_id, text, Freshness.CURRENT))


def test_the_same_evidence_id_is_packed_once_keeping_the_better_ranked() -> None:
    result = pack(
        [make_evidence("e1", "늦은 순위", rank=5), make_evidence("e1", "앞선 순위", rank=1)]
    )
    assert ([b.content for b in result.blocks], dict(result.dropped)) == (
        ["앞선 순위"],
        {"duplicate": 1},
    )


def test_overlapping_spans_of_one_version_keep_the_better_ranked() -> None:
    wide = make_evidence("wide", ARTICLE, rank=0)
    inner = make_evidence("inner", ARTICLE[40:120], start=40, rank=1)
    result = pack([inner, wide])
    assert (ids(result), dict(result.dropped)) == (["wide"], {"overlapping_span": 1})


def test_small_overlaps_from_windowed_chunking_are_kept() -> None:
    first = make_evidence("c1", ARTICLE[:100], rank=0)
    second = make_evidence("c2", ARTICLE[80:200], start=80, rank=1)
    assert ids(pack([first, second])) == ["c1", "c2"]


def test_an_overlap_whose_winner_did_not_fit_is_still_eligible() -> None:
    wide = make_evidence("wide", "가" * 600, rank=0)  # no safe boundary: skipped
    inner = make_evidence("inner", "가" * 30, start=10, rank=1)
    result = pack([wide, inner], budget=200)
    assert (ids(result), dict(result.dropped)) == (["inner"], {"over_budget": 1})


def test_near_duplicate_korean_text_from_another_document_is_dropped() -> None:
    original = make_evidence("a", ARTICLE, document_id="handbook", rank=0)
    copy = make_evidence("b", ARTICLE.replace("3개월", "석 달"), document_id="wiki", rank=1)
    result = pack([original, copy])
    assert (ids(result), dict(result.dropped)) == (["a"], {"near_duplicate": 1})


def test_two_versions_of_a_document_are_never_merged() -> None:
    old = make_evidence("v1", ARTICLE, version="2023", rank=0)
    new = make_evidence("v2", ARTICLE.replace("3개월", "석 달"), version="2024", rank=1)
    assert ids(pack([old, new])) == ["v1", "v2"]


def test_per_document_cap_and_max_blocks_hold() -> None:
    docs = ["a", "a", "a", "b", "c"]
    evidence = [
        make_evidence(
            f"{doc}{rank}", KOREAN_LINES[rank], document_id=doc, start=rank * 1_000, rank=rank
        )
        for rank, doc in enumerate(docs)
    ]
    result = pack(evidence, policy=PackingPolicy(max_blocks=3, max_blocks_per_document=2))
    assert ids(result) == ["a0", "a1", "b3"]
    assert dict(result.dropped) == {"max_blocks": 1, "per_document_cap": 1}


def test_an_oversize_top_item_is_truncated_and_the_rest_still_packed() -> None:
    long_item = make_evidence("long", ARTICLE, start=500, rank=0)
    short_item = make_evidence("short", KOREAN_LINES[20], document_id="other", rank=1)
    budget = block_cost(short_item.text, "S2") + block_cost(ARTICLE[:200])
    result = pack([long_item, short_item], budget=budget)
    first = result.blocks[0]
    assert ids(result) == ["long", "short"]
    assert first.truncated
    assert first.content.endswith(("다.", "요."))
    assert (first.start_char, first.end_char) == (500, 500 + len(first.content))
    assert result.source_map["S1"].end_char == first.end_char  # seed failure 5
    assert result.used_tokens <= budget


def test_an_oversize_item_without_a_safe_boundary_is_skipped_not_fatal() -> None:
    code = "```python\n" + "x = 1  # 설정. 값.\n" * 60 + "```"
    table = "| 항목 | 값 |\n" * 1 + "| " + "온도 88도. " * 80 + "|"
    evidence = [
        make_evidence("code", code, rank=0),
        make_evidence("table", table, document_id="t", rank=1),
        make_evidence("ok", KOREAN_LINES[3], document_id="ok", rank=2),
    ]
    result = pack(evidence, budget=120)
    assert ids(result)[-1] == "ok"
    assert "code" not in ids(result)
    assert all(not b.truncated or "```" not in b.content for b in result.blocks)


def test_a_fragment_below_the_minimum_block_size_is_not_packed() -> None:
    item = make_evidence("e", "짧다. " + "가나다라마바사 " * 80)
    result = pack([item], budget=block_cost("짧다.") + 2, policy=PackingPolicy(min_block_tokens=24))
    assert (result.blocks, dict(result.dropped)) == ((), {"too_small": 1})
    assert result.unanswerable_reason is UnanswerableReason.BUDGET_TOO_SMALL


def test_a_budget_too_small_for_any_block_returns_empty_without_raising() -> None:
    result = pack([make_evidence("e", KOREAN_LINES[0])], budget=3)
    assert (result.blocks, result.used_tokens, dict(result.dropped)) == ((), 0, {"over_budget": 1})
    assert result.unanswerable_reason is UnanswerableReason.BUDGET_TOO_SMALL


def test_no_usable_evidence_is_no_evidence() -> None:
    broken = Evidence("bad", "d", "v", "u", "text", 0, 99, 0, Freshness.CURRENT)
    blank = make_evidence("blank", "   \n ")
    result = pack([broken, blank])
    assert dict(result.dropped) == {"empty": 1, "invalid_span": 1}
    assert (
        pack([]).unanswerable_reason
        is result.unanswerable_reason
        is (UnanswerableReason.NO_EVIDENCE)
    )


def test_tokens_are_counted_by_the_tokenizer_not_by_characters() -> None:
    """Seed failure 1: Korean costs far more tokens per character than len/4 suggests."""
    text = KOREAN_LINES[0]
    naive = len(text) // 4
    result = pack([make_evidence("e", text)], budget=naive + 20)
    assert result.blocks == ()
    assert block_cost(text) > naive + 20


def test_a_tight_budget_drops_redundant_claim_support_and_keeps_graph_path_evidence() -> None:
    lines = KOREAN_LINES
    evidence = [
        make_evidence("best", lines[0], document_id="a", claim_id="c1", rank=0),
        make_evidence("again", lines[1], document_id="b", claim_id="c1", rank=1),
        make_evidence(
            "bridge", lines[2], document_id="c", claim_id="c1", rank=2, on_graph_path=True
        ),
        make_evidence("other", lines[3], document_id="d", claim_id="c2", rank=3),
    ]
    roomy = pack(evidence)
    assert ids(roomy) == ["best", "again", "bridge", "other"]
    budget = sum(
        block_cost(item.text, f"S{n}")
        for n, item in enumerate([evidence[0], evidence[2], evidence[3]], start=1)
    )
    tight = pack(evidence, budget=budget)
    assert ids(tight) == ["best", "bridge", "other"]
    assert dict(tight.dropped) == {"over_budget": 1}


def test_stale_evidence_is_marked_in_its_block_and_costs_the_marker() -> None:
    item = make_evidence("old", KOREAN_LINES[0], freshness=Freshness.STALE)
    block = pack([item]).blocks[0]
    rendered = render_block("S1", block.content, Freshness.STALE)
    assert 'freshness="stale"' in rendered
    assert block.tokens == COUNTER.count(rendered)


def test_a_better_ranked_stale_item_is_packed_after_the_current_one() -> None:
    old = make_evidence("old", ENGLISH_LINES[0], document_id="a", freshness=Freshness.STALE)
    new = make_evidence("new", ENGLISH_LINES[1], document_id="b", rank=1)
    result = pack([old, new])
    assert [(b.citation_id, b.evidence.evidence_id) for b in result.blocks] == [
        ("S1", "new"),
        ("S2", "old"),
    ]


def test_max_block_tokens_truncates_a_long_block_even_with_budget_left() -> None:
    item = make_evidence("long", ARTICLE)
    result = pack([item], policy=PackingPolicy(max_block_tokens=60, min_block_tokens=0))
    assert result.blocks[0].truncated
    assert result.blocks[0].tokens <= 60


def test_drop_reasons_are_plain_strings() -> None:
    result = pack([make_evidence("e", "x"), make_evidence("e", "y", rank=1)])
    assert [type(key) for key in result.dropped] == [str]
    assert DropReason.DUPLICATE.value in result.dropped


def test_a_better_ranked_stale_item_is_selected_over_a_worse_ranked_current_one() -> None:
    old = make_evidence("old", ENGLISH_LINES[0], document_id="a", freshness=Freshness.STALE)
    new = make_evidence("new", ENGLISH_LINES[1], document_id="b", rank=1)
    budget = COUNTER.count(render_block("S1", old.text, Freshness.STALE))
    assert budget < block_cost(old.text) + block_cost(new.text, "S2")  # not room for both
    result = pack([old, new], budget=budget)
    assert ids(result) == ["old"]
    assert dict(result.dropped) == {"over_budget": 1}


def test_a_current_near_copy_of_a_better_ranked_stale_item_takes_its_place() -> None:
    text = ENGLISH_LINES[2]
    old = make_evidence("old", text, document_id="adr-3", freshness=Freshness.STALE)
    other = make_evidence("other", ENGLISH_LINES[3], document_id="ops", rank=1)
    new = make_evidence("new", text.replace("drained", "drained."), document_id="adr-7", rank=2)
    result = pack([old, other, new])
    assert ids(result) == ["new", "other"]
    assert dict(result.dropped) == {"near_duplicate": 1}
    assert result.current_preferred == 1
    tight = pack([old, other, new], budget=block_cost(new.text))
    assert ids(tight) == ["new"]


def test_renumbered_stale_blocks_are_explained() -> None:
    old = make_evidence("old", ENGLISH_LINES[0], document_id="a", freshness=Freshness.STALE)
    new = make_evidence("new", ENGLISH_LINES[1], document_id="b", rank=1)
    result = pack([old, new])
    assert result.stale_presented_after == 1
    assert "1 stale block(s) presented after the 1 other(s)" in result.explain()


class _FirstCurrentIdCostsMore:
    """Charges 10 tokens more for a current block numbered S1: renumbering then costs room."""

    name = "first-current-id-costs-more"

    def count(self, text: str) -> int:
        return COUNTER.count(text) + (10 if '<source id="S1">' in text else 0)


def test_renumbering_that_costs_tokens_cuts_the_last_stale_block_not_the_budget() -> None:
    counter = _FirstCurrentIdCostsMore()
    old = make_evidence("old", ENGLISH_LINES[0], document_id="a", freshness=Freshness.STALE)
    new = make_evidence("new", ENGLISH_LINES[1], document_id="b", rank=1)
    selected = counter.count(render_block("S1", old.text, Freshness.STALE)) + counter.count(
        render_block("S2", new.text, Freshness.CURRENT)
    )
    result = pack_to_budget([old, new], selected, counter, LOOSE)
    assert ids(result) == ["new"]
    assert result.used_tokens == counter.count(render_block("S1", new.text, Freshness.CURRENT))
    assert result.used_tokens <= selected
    assert dict(result.dropped) == {"over_budget": 1}


def test_the_context_manifest_says_how_stale_blocks_were_ordered() -> None:
    old = make_evidence("old", ENGLISH_LINES[0], document_id="a", freshness=Freshness.STALE)
    new = make_evidence("new", ENGLISH_LINES[1], document_id="b", rank=1)
    manifest = build_manifest(pack([old, new]))
    assert manifest.as_dict()["selection"] == pack([old, new]).explain()
    assert "presented after" in manifest.selection
