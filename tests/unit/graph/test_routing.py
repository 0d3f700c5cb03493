from __future__ import annotations

from graphctx.contract import NodeKind, RetrievalMode, RetrieverName
from graphctx.retrieve.question_type import classify_question
from graphctx.retrieve.routing import graph_verdict, plan_route
from graphctx.store.records import EntityMatch

HYBRID = [RetrieverName.FULLTEXT, RetrieverName.VECTOR]
GRAPH = [*HYBRID, RetrieverName.GRAPH]
SERVICE = EntityMatch("svc:pay", NodeKind.ENTITY, "Service", "payment-service", 2)
LONELY = EntityMatch("svc:x", NodeKind.ENTITY, "Service", "x-service", 0)


def test_auto_walks_the_graph_whatever_the_cue_words_say() -> None:
    for query in ("dependencies of X", "What is X?", "Who is the spouse of the director of Y?"):
        route = plan_route(RetrievalMode.AUTO, question=classify_question(query))
        assert route.retrievers == GRAPH
        assert "auto: the graph is walked; its ranking joins only on evidence" in route.reasons


def test_the_question_type_is_recorded_not_obeyed() -> None:
    route = plan_route(RetrievalMode.AUTO, question=classify_question("What is X?"))
    assert route.reasons[-1].startswith("auto: simple_lookup question")


def test_without_a_graph_auto_is_hybrid() -> None:
    route = plan_route(
        RetrievalMode.AUTO, graph_available=False, question=classify_question("What is X?")
    )
    assert route.retrievers == HYBRID


def test_augmentation_adds_the_graph_for_a_visible_entity_with_relations() -> None:
    question = classify_question("Tell me about payment-service")
    chose = [RetrieverName.FULLTEXT]
    route = plan_route(RetrievalMode.AUTO, question=question, entities=[SERVICE], llm_choice=chose)
    assert route.retrievers == [RetrieverName.FULLTEXT, RetrieverName.GRAPH]
    assert route.reasons[-1] == (
        "ontology: query term 'payment-service' is a visible Service with 2 visible"
        " relation(s): graph route added"
    )


def test_augmentation_needs_at_least_one_visible_relation() -> None:
    question = classify_question("Tell me about x-service")
    chose = [RetrieverName.FULLTEXT]
    route = plan_route(RetrievalMode.AUTO, question=question, entities=[LONELY], llm_choice=chose)
    assert route.retrievers == chose


def test_the_graph_joins_when_propagation_changes_the_top() -> None:
    verdict = graph_verdict(["a", "b", "c"], ["a", "x", "b", "c"], {"x": 1}, [], 1)
    assert verdict.joins
    assert "1 chunk(s) entered the top 10" in verdict.reason


def test_the_graph_is_left_out_when_the_top_is_unchanged() -> None:
    ranking = [f"c{i}" for i in range(12)]
    verdict = graph_verdict(ranking, [*ranking, "z"], {"z": 1}, [], 1)
    assert not verdict.joins
    assert verdict.reason.startswith("graph left out")


def test_a_named_entity_with_relations_always_lets_the_graph_join() -> None:
    verdict = graph_verdict(["a"], ["a"], {}, [SERVICE], 0)
    assert verdict.joins


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
