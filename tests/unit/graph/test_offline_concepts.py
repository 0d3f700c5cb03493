"""Offline concepts: headings, defined terms and citation clusters, in seed 001's shape."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.contract import NodeKind
from graphctx.eval.quality import concept_gold_pairs
from graphctx.ingest.extract import ExtractionInput, OfflineExtractor
from graphctx.ingest.extract.concept_shape import concept_bounds
from graphctx.ingest.extract.items import ConceptItem, heading_paths, items_of
from graphctx.ingest.extract.offline_concepts import (
    ConceptSource,
    FormedConcept,
    form_concepts,
)
from graphctx.ingest.extract.terms import find_definitions, term_users
from graphctx.store.records import PART_OF, KnowledgeNode

LAW = "시험법"


def article(number: str, title: str, text: str, **structure: str) -> ExtractionInput:
    doc_id = f"{LAW}-{number}"
    metadata = {"law": LAW, "article_no": number, **structure}
    return ExtractionInput(doc_id, title, metadata, None, ((f"{doc_id}#0", text),))


CH1 = {"chapter": "제1장 총칙"}
CH2_1 = {"chapter": "제2장 해고", "section": "제1절 해고의 제한 <개정 2020.1.1>"}
CH2_2 = {"chapter": "제2장 해고", "section": "제2절 구제 절차"}
CH3 = {"chapter": "제3장 근로시간과 휴가"}
CH4 = {"chapter": "제4장 벌칙"}

STATUTE = [
    article("제1조", "목적", "이 법은 근로자의 생활을 보장한다.", **CH1),
    article(
        "제2조",
        "정의",
        "① 이 법에서 사용하는 용어의 뜻은 다음과 같다.\n"
        '  1. "근로자"란 임금을 목적으로 근로를 제공하는 사람을 말한다.\n'
        '  2. "단시간근로자"란 소정근로시간이 짧은 근로자를 말한다.',
        **CH1,
    ),
    article("제3조", "적용 범위", "이 법은 근로자대표가 있는 사업에 적용한다.", **CH1),
    article(
        "제10조",
        "해고 등의 제한",
        '사용자는 근로자에게 정당한 이유 없이 해고(이하 "부당해고등"이라 한다)를 하지 못한다.',
        **CH2_1,
    ),
    article(
        "제11조",
        "경영상 이유에 의한 해고의 제한",
        '제10조에도 불구하고 해고할 수 있다. 과반수의 대표(이하 "근로자대표"라 한다)와 협의한다.',
        **CH2_1,
    ),
    article(
        "제12조",
        "우선 재고용",
        "제11조에 따라 해고된 근로자를 고용한다. 제10조를 준용한다.",
        **CH2_1,
    ),
    article("제13조", "구제신청", "부당해고등을 당한 근로자는 구제를 신청할 수 있다.", **CH2_2),
    article(
        "제14조",
        "조사",
        '제13조의 신청을 조사하는 기관(이하 이 조에서 "조사기관"이라 한다)은 근로자를 부른다.',
        **CH2_2,
    ),
    article("제15조", "구제명령", "부당해고등이면 구제명령을 한다. 단시간근로자도 같다.", **CH2_2),
    *[
        article(f"제{20 + n}조", title, f"근로자의 {title}에 관하여 정한다.", **CH3)
        for n, title in enumerate(
            [
                "근로시간",
                "연장 근로시간",
                "야간 근로시간",
                "휴일 근로시간",
                "근로시간 특례",
                "연차 휴가",
                "연차 휴가 촉진",
                "휴가 대체",
                "출산 휴가",
                "휴가 수당",
            ]
        )
    ],
    article(
        "제40조",
        "벌칙",
        "제10조, 제11조, 제12조, 제13조, 제15조, 제20조, 제21조, 제22조, 제23조를 위반한 자는"
        " 벌금에 처한다.",
        **CH4,
    ),
]
NOTES = [  # passages with titles and no structure: never grouped by their order
    ExtractionInput(f"note-{n}", f"Note {n}", {}, None, ((f"note-{n}#0", f"Plain note {n}."),))
    for n in range(40)
]


def concepts_of(docs: list[ExtractionInput]) -> tuple[list[KnowledgeNode], OfflineExtractor]:
    extractor = OfflineExtractor(titles_as_entities=False, concepts=True)
    nodes, _, _ = extractor.build(docs)
    return [n for n in nodes if n.kind is NodeKind.CONCEPT], extractor


def members(node: KnowledgeNode) -> set[str]:
    return {chunk.split("-")[1].split("#")[0] for chunk in node.supporting_chunk_ids}


def test_a_defined_term_links_its_definer_with_the_articles_using_it() -> None:
    nodes, _ = concepts_of([*STATUTE, *NOTES])
    by_name = {n.name: n for n in nodes}
    unfair = by_name["“부당해고등” (정의)"]
    assert (members(unfair), unfair.node_type, unfair.support_link) == (
        {"제10조", "제13조", "제15조"},
        "definition",
        PART_OF,
    )
    assert dict(unfair.support_roles) == {
        "시험법-제10조#0": "정의",
        "시험법-제13조#0": "용어 사용",
        "시험법-제15조#0": "용어 사용",
    }
    assert members(by_name["“단시간근로자” (정의)"]) == {"제2조", "제15조"}
    assert "부당해고등" not in unfair.node_id  # ids carry no text


def test_a_term_used_everywhere_and_a_term_local_to_one_article_form_no_concept() -> None:
    keyed = [(d.document_id, LAW, d.chunks[0][1]) for d in STATUTE]
    terms = {t.term: t for t in find_definitions(keyed)}
    assert set(terms) == {
        "근로자",
        "근로자대표",
        "단시간근로자",
        "부당해고등",
    }  # not local 조사기관
    users = term_users(list(terms.values()), keyed)
    assert "시험법-제3조" not in users[terms["근로자"]]  # 근로자대표 is not a use of 근로자
    assert users[terms["근로자대표"]] == ["시험법-제3조"]
    assert "시험법-제2조" not in users[terms["근로자"]]  # its definer
    _, shape = form_concepts(items_of(STATUTE, {d.document_id: d.document_id for d in STATUTE}), {})
    assert shape.general_terms == 1  # 근로자: in more articles than a concept may hold


def test_sections_become_concepts_and_a_long_chapter_is_cut_into_similar_runs() -> None:
    nodes, _ = concepts_of([*STATUTE, *NOTES])
    structural = [members(n) for n in nodes if n.node_id.startswith("concept:offline:structure")]
    assert {"제13조", "제14조", "제15조"} in structural  # 제2절, whole
    chapter3 = [m for m in structural if m <= {f"제{n}조" for n in range(20, 30)}]
    assert [len(m) for m in chapter3] == [5, 5]  # 근로시간 … | 휴가 …: cut where titles change
    assert {"제20조", "제21조", "제22조", "제23조", "제24조"} in chapter3
    assert all(len(m) <= 8 for m in structural)


def test_articles_citing_each_other_form_a_cluster_without_the_penalty_hub() -> None:
    nodes, _ = concepts_of([*STATUTE, *NOTES])
    cited = [members(n) for n in nodes if n.node_id.startswith("concept:offline:references")]
    assert cited == [] or all("제40조" not in m for m in cited)
    # 10-11-12 cite each other: the same members as 제1절, merged into one concept
    assert sum(1 for n in nodes if members(n) == {"제10조", "제11조", "제12조"}) == 1


def test_the_shape_is_reported_count_within_bounds_overlap_and_fallback() -> None:
    extractor = OfflineExtractor(titles_as_entities=False, concepts=True)
    nodes, _, report = extractor.build([*STATUTE, *NOTES])
    shape = report.concept_shape
    assert shape is not None
    n = len(STATUTE) + len(NOTES)
    low, high = concept_bounds(n)
    assert (shape.items, shape.low, shape.high) == (n, low, high)
    assert low <= shape.concepts <= high
    assert report.concepts == shape.concepts == sum(1 for x in nodes if x.kind is NodeKind.CONCEPT)
    assert shape.in_several >= 2  # 제10조, 제13조, 제15조 sit in a section and a term concept
    covered = set().union(*(members(x) for x in nodes if x.kind is NodeKind.CONCEPT))
    assert report.fallback_rate == round(1 - len(covered) / n, 4)
    assert "fallback rate" in report.details[-1]


def test_passages_without_structure_or_definitions_get_no_concept() -> None:
    nodes, extractor = concepts_of(NOTES)
    _, _, report = extractor.build(NOTES)
    assert nodes == []
    assert (report.concepts, report.fallback_rate) == (0, 1.0)


MARKDOWN = (
    "# Operations guide\n\nIntro.\n",
    "## Deploy\n\nHow to deploy.\n\n```sh\n# not a heading\n```\n",
    "### Canary\n\nCanary steps.\n",
    "### Rollback\n\nRollback steps.\n",
    "### Verify\n\nVerify steps.\n",
    "## Observe\n\nDashboards.\n",
    "### Metrics\n\nMetrics.\n",
    "### Logs\n\nLogs.\n",
    "### Traces\n\nTraces.\n",
    "More about traces, in a second chunk of the same section.\n",
)


def test_markdown_sections_under_one_heading_form_a_concept() -> None:
    chunks = tuple((f"guide#{n}", text) for n, text in enumerate(MARKDOWN))
    assert heading_paths([t for _, t in chunks])[:4] == [
        ("Operations guide",),
        ("Operations guide", "Deploy"),  # the fenced "# not a heading" is code
        ("Operations guide", "Deploy", "Canary"),
        ("Operations guide", "Deploy", "Rollback"),
    ]
    doc = ExtractionInput("guide", "Guide", {}, "ops/guide.md", chunks)
    items = items_of([doc], {"guide": "doc:guide"})
    assert [i.parent[-1] for i in items[:3]] == ["Guide", "Operations guide", "Deploy"]
    assert (len(items), items[-1].chunk_ids) == (9, ("guide#8", "guide#9"))  # one section
    formed, shape = form_concepts(items, {})
    # three sibling groups, but n = 9 allows at most ceil(9/5) = 2: the two that cover more
    assert concept_bounds(9) == (1, 2)
    assert [c.members for c in formed] == [
        ("guide#2", "guide#3", "guide#4"),  # under Deploy
        ("guide#6", "guide#7", "guide#8"),  # under Observe
    ]
    assert all(c.source is ConceptSource.STRUCTURE for c in formed)
    assert [c.name for c in formed] == ["Deploy", "Observe"]
    assert (shape.candidates, shape.fallback_rate) == (3, round(1 - 6 / 9, 4))
    # the same text in a plain-text file has no headings
    plain = ExtractionInput("guide", "Guide", {}, "ops/guide.txt", chunks)
    assert len(items_of([plain], {"guide": "doc:guide"})) == 1


def test_english_definitions_are_terms() -> None:
    text = (
        '"Personal Data" means any information. The processor (the "Processor") acts.\n'
        "- **Controller**: the one who decides.\n"
    )
    keyed = [("a", "", text), ("b", "", "Personal Data held by the Processor.")]
    terms = find_definitions(keyed)
    assert [t.term for t in terms] == ["Controller", "Personal Data", "Processor"]
    users = term_users(terms, keyed)
    assert {t.term: u for t, u in users.items()} == {
        "Controller": [],
        "Personal Data": ["b"],
        "Processor": ["b"],
    }


def test_capitalised_terms_are_opt_in_and_titles_are_not_terms() -> None:
    passages = [
        ExtractionInput(
            "p1", "Demon Dice", {}, None, (("p1#0", "Demon Dice by Fast Forward Games."),)
        ),
        ExtractionInput(
            "p2", "Dragon Dice", {}, None, (("p2#0", "Fast Forward Games and Demon Dice."),)
        ),
        *NOTES[:8],
    ]
    assert concepts_of(passages)[0] == []
    extractor = OfflineExtractor(titles_as_entities=False, concepts=True, capitalised_terms=True)
    nodes, _, _ = extractor.build(passages)
    found = [(n.name, n.supporting_chunk_ids) for n in nodes if n.kind is NodeKind.CONCEPT]
    assert found == [("“Fast Forward Games” (term)", ("p1#0", "p2#0"))]  # not the title


def test_gold_pairs_sharing_a_concept_are_counted() -> None:
    found = concept_gold_pairs([{"a", "b", "c"}, {"d", "e"}], [("a", "b"), ("a", "d"), ("d", "e")])
    assert found == {
        "gold_pairs": 3,
        "gold_pairs_sharing_concept": round(2 / 3, 4),
        "co_members_per_member": round((2 + 2 + 2 + 1 + 1) / 5, 2),
    }


@st.composite
def structured_items(draw: st.DrawFn) -> list[ConceptItem]:
    words = ["근로", "시간", "휴가", "해고", "임금", "구제", "명령", "보상"]
    items = []
    for n in range(draw(st.integers(0, 60))):
        chapter = draw(st.sampled_from(["", "제1장", "제2장", "제3장"]))
        section = draw(st.sampled_from(["", "제1절", "제2절"])) if chapter else ""
        title = " ".join(draw(st.lists(st.sampled_from(words), min_size=1, max_size=3)))
        parent = tuple(p for p in (chapter, section) if p)
        items.append(
            ConceptItem(f"i{n}", f"i{n}", f"i{n}", title, title, title, (f"c{n}",), parent)
        )
    return items


@settings(max_examples=60, deadline=None)
@given(items=structured_items(), max_members=st.integers(2, 9))
def test_every_concept_is_small_within_bounds_and_structure_runs_are_consecutive(
    items: list[ConceptItem], max_members: int
) -> None:
    formed, shape = form_concepts(items, {}, max_members=max_members)
    assert shape.concepts == len(formed) <= concept_bounds(len(items))[1]
    order = {item.key: n for n, item in enumerate(items)}
    parents = {item.key: item.parent for item in items}
    for concept in formed:
        assert isinstance(concept, FormedConcept)
        assert 2 <= len(concept.members) <= max_members
        assert len(set(concept.members)) == len(concept.members)
        if concept.source is ConceptSource.STRUCTURE:
            assert len({parents[k] for k in concept.members}) == 1
            assert () not in {parents[k] for k in concept.members}
            siblings = [k for k in order if parents[k] == parents[concept.members[0]]]
            start = siblings.index(concept.members[0])
            assert list(concept.members) == siblings[start : start + len(concept.members)]
    assert len({c.concept_id for c in formed}) == len(formed)
