from __future__ import annotations

from graphctx.contract import NodeKind, RetrievalMode, RetrieverName
from graphctx.retrieve.question_type import classify_question
from graphctx.retrieve.routing import plan_route
from graphctx.store.records import EntityMatch

HYBRID = [RetrieverName.FULLTEXT, RetrieverName.VECTOR]
GRAPH = [*HYBRID, RetrieverName.GRAPH]
SERVICE = EntityMatch("svc:pay", NodeKind.ENTITY, "Service", "payment-service", 2)
LONELY = EntityMatch("svc:x", NodeKind.ENTITY, "Service", "x-service", 0)


def test_relational_questions_are_routed_to_the_graph_by_rule() -> None:
    route = plan_route(RetrievalMode.AUTO, question=classify_question("dependencies of X"))
    assert route.retrievers == GRAPH


def test_a_simple_lookup_stays_hybrid_and_says_why() -> None:
    route = plan_route(RetrievalMode.AUTO, question=classify_question("What is X?"))
    assert route.retrievers == HYBRID
    assert route.reasons[-1].startswith("auto: simple lookup")


def test_augmentation_adds_the_graph_for_a_visible_entity_with_relations() -> None:
    question = classify_question("Tell me about payment-service")
    route = plan_route(RetrievalMode.AUTO, question=question, entities=[SERVICE])
    assert route.retrievers == GRAPH
    assert route.reasons[-1] == (
        "ontology: query term 'payment-service' is a visible Service with 2 visible"
        " relation(s): graph route added"
    )


def test_augmentation_needs_at_least_one_visible_relation() -> None:
    question = classify_question("Tell me about x-service")
    route = plan_route(RetrievalMode.AUTO, question=question, entities=[LONELY])
    assert route.retrievers == HYBRID


def test_augmentation_never_removes_what_the_llm_router_chose() -> None:
    question = classify_question("Tell me about payment-service")
    chose = [RetrieverName.VECTOR]
    route = plan_route(RetrievalMode.AUTO, question=question, entities=[SERVICE], llm_choice=chose)
    assert route.retrievers == [RetrieverName.VECTOR, RetrieverName.GRAPH]
    unchanged = plan_route(RetrievalMode.AUTO, question=question, entities=[], llm_choice=chose)
    assert unchanged.retrievers == [RetrieverName.VECTOR]


def test_explicit_modes_ignore_rules_and_entities() -> None:
    question = classify_question("dependencies of payment-service")
    hybrid = plan_route(RetrievalMode.HYBRID, question=question, entities=[SERVICE])
    graph = plan_route(RetrievalMode.GRAPH, question=classify_question("What is X?"))
    assert (hybrid.retrievers, graph.retrievers) == (HYBRID, GRAPH)
