from __future__ import annotations

from graphctx.contract import NodeKind
from graphctx.ingest.extract import ExtractionInput, OfflineExtractor
from graphctx.ingest.extract.mentions import DictionaryEntry, EntityDictionary, find_mentions

DICTIONARY = EntityDictionary.from_entries(
    [
        DictionaryEntry("svc:pay", "payment-service", ("결제서비스",), "Service"),
        DictionaryEntry("sys:log-a", "logistics-server-A", ("물류서버-A",), "System"),
        DictionaryEntry("film:war", "Polish-Russian War (film)"),
        DictionaryEntry("t:time", "Time"),
        DictionaryEntry("p:smith-a", "John Smith", ("Smith",)),
        DictionaryEntry("p:smith-b", "Jane Smith", ("Smith",)),
    ]
)


def mentioned(text: str) -> list[str]:
    return [m.node_id for m in find_mentions(text, DICTIONARY)]


def test_names_and_aliases_are_found_case_insensitively() -> None:
    assert mentioned("Payment-Service calls logistics-server-a.") == ["svc:pay", "sys:log-a"]


def test_a_korean_name_with_a_particle_is_found() -> None:
    assert mentioned("결제서비스는 물류서버-A에 연결된다") == ["svc:pay", "sys:log-a"]


def test_disambiguated_titles_match_without_their_parenthesis() -> None:
    assert mentioned("It was directed after the Polish-Russian War ended.") == ["film:war"]


def test_a_single_lowercase_word_is_not_a_proper_noun_mention() -> None:
    assert mentioned("at the time of the merger") == []
    assert mentioned("Time magazine") == ["t:time"]


def test_an_alias_shared_by_two_entities_never_matches() -> None:
    assert mentioned("Smith said so; John Smith agreed.") == ["p:smith-a"]


def test_offline_extraction_links_documents_by_reference_and_mention() -> None:
    docs = [
        ExtractionInput(
            "law-28",
            "구제신청",
            {"law": "근로기준법", "article_no": "제28조"},
            None,
            (("law-28#0", "제23조에 따른 부당해고등이 있으면 구제를 신청할 수 있다."),),
        ),
        ExtractionInput(
            "law-23",
            "해고 등의 제한",
            {"law": "근로기준법", "article_no": "제23조"},
            None,
            (("law-23#0", "사용자는 정당한 이유 없이 해고하지 못한다."),),
        ),
        ExtractionInput(
            "svc",
            "Payments overview",
            {},
            "services/payment.md",
            (("svc#0", "Depends on logistics-server-A. See [db](db.md)."),),
        ),
        ExtractionInput(
            "db", "Database", {}, "services/db.md", (("db#0", "see Payments overview"),)
        ),
    ]
    nodes, relations, report = OfflineExtractor(DICTIONARY).build(docs)
    assert sorted(
        (r.source_id, r.relation_type, r.target_id, r.supporting_chunk_ids) for r in relations
    ) == [
        ("article:근로기준법:28", "REFERENCES", "article:근로기준법:23", ("law-28#0",)),
        ("doc:svc", "REFERENCES", "doc:db", ("svc#0",)),
    ]
    by_id = {(n.node_id, n.support_link): n for n in nodes}
    assert by_id[("article:근로기준법:23", "SUPPORTS")].name == "근로기준법 제23조 (해고 등의 제한)"
    assert by_id[("sys:log-a", "MENTIONS")].supporting_chunk_ids == ("svc#0",)
    assert by_id[("doc:svc", "MENTIONS")].supporting_chunk_ids == ("db#0",)  # title mention
    assert by_id[("doc:svc", "SUPPORTS")].kind is NodeKind.ENTITY
    assert (report.references, report.mentions, report.document_nodes) == (2, 2, 4)
