"""Graph expansion through the whole pipeline, on a small statute-like fixture graph.

The fixture paraphrases a few Labour Standards Act articles (not the law text): the remedy,
restriction and notice articles share one Concept; an overtime article reaches the ordinary
wage definition only through an HR-only guideline node.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    DenialReason,
    EvidenceItem,
    NodeKind,
    RetrievalMode,
    RetrieverName,
)
from graphctx.provider import ContextProvider

ARTICLES = {
    "lsa-28": (
        "law",
        "부당해고등의 구제신청",
        "근로자는 노동위원회에 구제를 신청할 수 있다. 구제신청은 3개월 이내에 하여야 한다.",
    ),
    "lsa-23": ("law", "해고 등의 제한", "사용자는 정당한 이유 없이 근로자를 해고하지 못한다."),
    "lsa-26": ("law", "해고의 예고", "사용자는 적어도 30일 전에 예고를 하여야 한다."),
    "lsa-60": (
        "law",
        "연차 유급휴가",
        "1년간 80퍼센트 이상 출근한 근로자에게 15일의 유급휴가를 주어야 한다.",
    ),
    "lsa-56": (
        "law",
        "연장 근로",
        "연장근로에 대하여는 통상임금의 100분의 50 이상을 가산하여 지급하여야 한다.",
    ),
    "lsa-2": ("law", "정의", "통상임금이란 정기적이고 일률적으로 지급하기로 정한 금품을 말한다."),
    "lsa-50": (
        "law",
        "근로시간",
        "1주 간의 근로시간은 휴게시간을 제외하고 40시간을 초과할 수 없다.",
    ),
    "lsa-54": ("law", "휴게", "근로시간이 4시간인 경우에는 30분 이상의 휴게시간을 주어야 한다."),
    "lsa-74": (
        "law",
        "임산부의 보호",
        "임신 중의 여성에게 출산 전과 출산 후를 통하여 90일의 휴가를 주어야 한다.",
    ),
    "hr-guide": (
        "hr",
        "연장근로 수당 지침",
        "연장근로 수당 산정은 시간급 통상임금을 기준으로 한다.",
    ),
}

GRAPH = """
nodes:
  - id: concept:lsa:dismissal
    kind: Concept
    type: procedure
    name: 해고와 고용 보장
    members:
      - {document: lsa-28, role: 구제}
      - {document: lsa-23, role: 요건}
      - {document: lsa-26, role: 절차}
  - {id: art:56, type: Article, name: 제56조, support: [lsa-56]}
  - {id: art:2, type: Article, name: 제2조, support: [lsa-2]}
  - {id: guide:overtime, type: Guideline, name: 연장근로 수당 지침, support: [hr-guide]}
relations:
  - {source: art:56, type: CALCULATION_INPUT, target: guide:overtime}
  - {source: guide:overtime, type: CALCULATION_INPUT, target: art:2}
"""

SERVICES = {
    "svc-payment": (
        "eng",
        "payment-service",
        "payment-service takes card payments and keeps a ledger.",
    ),
    "svc-postgres": (
        "eng",
        "postgres-main",
        "postgres-main is the primary relational database cluster.",
    ),
    "svc-checkout": (
        "eng",
        "checkout",
        "checkout renders the basket; it calls payment-service to charge.",
    ),
}

SERVICE_GRAPH = """
nodes:
  - id: svc:payment
    type: Service
    name: payment-service
    aliases: [결제서비스]
    support: [svc-payment]
  - {id: svc:postgres, type: System, name: postgres-main, support: [svc-postgres]}
  - {id: svc:checkout, type: Service, name: checkout, support: [svc-checkout]}
relations:
  - source: svc:payment
    type: DEPENDS_ON
    target: svc:postgres
    support: [{document: svc-payment, quote: keeps a ledger}]
  - source: svc:checkout
    type: DEPENDS_ON
    target: svc:payment
    support: [{document: svc-checkout, quote: calls payment-service}]
"""


def write_docs(root: Path, docs: dict[str, tuple[str, str, str]]) -> Path:
    root.mkdir()
    for doc_id, (scope, title, text) in docs.items():
        (root / f"{doc_id}.md").write_text(
            f"---\ndocument_id: {doc_id}\ntitle: {title}\nscopes: [{scope}]\n"
            f"updated_at: 2026-06-01\n---\n{text}\n",
            encoding="utf-8",
        )
    return root


@pytest.fixture
def law(tmp_path: Path, provider: ContextProvider) -> ContextProvider:
    report = provider.ingest_path(write_docs(tmp_path / "law", ARTICLES), namespace="law")
    assert report.errors == []
    (tmp_path / "law.yaml").write_text(GRAPH, encoding="utf-8")
    provider.ingest_graph(tmp_path / "law.yaml", namespace="law")
    return provider


@pytest.fixture
def services(tmp_path: Path, provider: ContextProvider) -> ContextProvider:
    report = provider.ingest_path(write_docs(tmp_path / "svc", SERVICES), namespace="svc")
    assert report.errors == []
    (tmp_path / "svc.yaml").write_text(SERVICE_GRAPH, encoding="utf-8")
    provider.ingest_graph(tmp_path / "svc.yaml", namespace="svc")
    return provider


def ask(
    provider: ContextProvider,
    query: str,
    scopes: list[str],
    namespace: str,
    mode: RetrievalMode = RetrievalMode.AUTO,
) -> ContextResponse:
    return provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="p",
            allowed_scopes=scopes,
            namespace=namespace,
            retrieval_mode=mode,
        )
    )


def item(response: ContextResponse, document_id: str) -> EvidenceItem | None:
    return next((i for i in response.items if i.document_id == document_id), None)


def path_of(found: EvidenceItem | None) -> list[tuple[NodeKind, str, str | None]]:
    assert found is not None
    return [(s.kind, s.id, s.via) for s in found.provenance_path]


def test_a_remedy_question_reaches_restriction_and_notice_through_their_shared_concept(
    law: ContextProvider,
) -> None:
    response = ask(law, "노동위원회에 구제신청하는 기한은?", ["law"], "law")
    assert RetrieverName.GRAPH in response.manifest.route.retrievers
    remedy = item(response, "lsa-28")
    assert remedy is not None
    for document_id, role in (("lsa-23", "요건"), ("lsa-26", "절차")):
        found = item(response, document_id)
        assert found is not None
        assert found.retrieval_scores.graph is not None
        steps = path_of(found)
        assert steps[1] == (NodeKind.CONCEPT, "concept:lsa:dismissal", "PART_OF(구제)")
        assert steps[0] == (NodeKind.CHUNK, remedy.chunk_id, None)
        assert steps[-1] == (NodeKind.CHUNK, found.chunk_id, f"<-PART_OF({role})")


def test_hybrid_mode_never_expands(law: ContextProvider) -> None:
    response = ask(law, "노동위원회에 구제신청하는 기한은?", ["law"], "law", RetrievalMode.HYBRID)
    assert RetrieverName.GRAPH not in response.manifest.route.retrievers
    assert all(i.provenance_path[0].kind is NodeKind.DOCUMENT for i in response.items)
    assert all(i.retrieval_scores.graph is None for i in response.items)


def test_a_hidden_node_on_the_only_path_blocks_the_expansion_and_the_denial_is_counted(
    law: ContextProvider,
) -> None:
    blocked = ask(law, "연장근로 수당은 얼마인가요?", ["law"], "law")
    allowed = ask(law, "연장근로 수당은 얼마인가요?", ["law", "hr"], "law")

    assert [(d.stage, d.reason) for d in blocked.denied] == [("expand", DenialReason.OUT_OF_SCOPE)]
    assert blocked.denied[0].count >= 1
    mentioned = {step.id for i in blocked.items for step in i.provenance_path}
    assert "guide:overtime" not in mentioned
    definition = item(blocked, "lsa-2")
    assert definition is None or definition.retrieval_scores.graph is None
    assert item(blocked, "hr-guide") is None

    reached = item(allowed, "lsa-2")
    assert reached is not None
    assert reached.retrieval_scores.graph is not None
    ids = [step.id for step in reached.provenance_path]
    assert "guide:overtime" in ids
    assert ids[-1] == reached.chunk_id


def test_a_simple_lookup_is_walked_and_the_graph_joins_only_on_evidence(
    law: ContextProvider,
) -> None:
    response = ask(law, "해고 등의 제한이란?", ["law"], "law")
    route = response.manifest.route
    assert any(reason.startswith("auto: simple_lookup question") for reason in route.reasons)
    assert "expand" in [s.stage for s in response.manifest.stages]
    verdicts = [r for r in route.reasons if r.startswith(("graph joins", "graph left out"))]
    assert len(verdicts) == 1
    joined = verdicts[0].startswith("graph joins")
    assert (RetrieverName.GRAPH in route.retrievers) is joined
    if not joined:
        assert all(i.provenance_path[0].kind is NodeKind.DOCUMENT for i in response.items)
    # The article the question names stays first: a neighbour never outranks its anchor.
    assert response.items[0].provenance_path[0].kind is NodeKind.DOCUMENT


def test_augmentation_adds_the_graph_route_for_a_known_entity_only(
    services: ContextProvider,
) -> None:
    known = ask(services, "Tell me about payment-service", ["eng"], "svc")
    unknown = ask(services, "Tell me about warp-drive", ["eng"], "svc")
    assert RetrieverName.GRAPH in known.manifest.route.retrievers
    assert any(
        r.startswith("ontology: query term 'payment-service' is a visible Service")
        for r in known.manifest.route.reasons
    )
    assert not any(r.startswith("ontology") for r in unknown.manifest.route.reasons)
    assert not any(
        r.startswith("graph joins: a named entity") for r in unknown.manifest.route.reasons
    )


def test_augmentation_ignores_entities_the_principal_cannot_see(
    services: ContextProvider,
) -> None:
    response = ask(services, "Tell me about payment-service", ["ops"], "svc")
    assert not any(r.startswith("ontology") for r in response.manifest.route.reasons)
    assert not any(
        r.startswith("graph joins: a named entity") for r in response.manifest.route.reasons
    )


def test_dependencies_are_answered_from_the_entity_neighbourhood_with_the_relation_path(
    services: ContextProvider,
) -> None:
    response = ask(services, "What are the dependencies of payment-service?", ["eng"], "svc")
    assert RetrieverName.GRAPH in response.manifest.route.retrievers
    database = item(response, "svc-postgres")
    assert path_of(database) == [
        (NodeKind.ENTITY, "svc:payment", None),
        (NodeKind.ENTITY, "svc:postgres", "DEPENDS_ON"),
        (NodeKind.CHUNK, database.chunk_id if database else "", "<-SUPPORTS"),
    ]
    checkout = item(response, "svc-checkout")
    assert (
        checkout is None or checkout.retrieval_scores.graph is None
    )  # a dependant, not a dependency


def test_korean_dependants_question_walks_incoming_relations(services: ContextProvider) -> None:
    response = ask(services, "결제서비스에 의존하는 서비스는?", ["eng"], "svc")
    checkout = item(response, "svc-checkout")
    assert checkout is not None
    steps = path_of(checkout)
    assert steps[:2] == [
        (NodeKind.ENTITY, "svc:payment", None),
        (NodeKind.ENTITY, "svc:checkout", "<-DEPENDS_ON"),
    ]
