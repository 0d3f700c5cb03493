"""Seed 004: ontology augmentation runs after the LLM router and only ever adds a route."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphctx.contract import NodeKind, RetrievalMode, RetrieverName
from graphctx.retrieve.assist.llm_stages import AUTO_ROUTES
from graphctx.retrieve.assist.prompts import parse_routes
from graphctx.retrieve.question_type import classify_question
from graphctx.retrieve.routing import plan_route
from graphctx.store.records import EntityMatch

entities = st.lists(
    st.builds(
        EntityMatch,
        node_id=st.text(min_size=1, max_size=8),
        kind=st.sampled_from([NodeKind.ENTITY, NodeKind.CONCEPT]),
        node_type=st.none() | st.sampled_from(["Service", "Law"]),
        key=st.text(min_size=1, max_size=8),
        relation_count=st.integers(0, 5),
    ),
    max_size=4,
)
choices = st.lists(st.sampled_from(AUTO_ROUTES), min_size=1, max_size=3, unique=True)


@given(choice=choices, found=entities, query=st.text(max_size=40))
def test_augmentation_never_removes_a_route_the_llm_router_chose(
    choice: list[RetrieverName], found: list[EntityMatch], query: str
) -> None:
    route = plan_route(
        RetrievalMode.AUTO, question=classify_question(query), entities=found, llm_choice=choice
    )
    assert route.retrievers[: len(choice)] == choice  # kept, in the router's order
    added = route.retrievers[len(choice) :]
    related = any(m.relation_count > 0 for m in found)
    assert added == ([RetrieverName.GRAPH] if related and RetrieverName.GRAPH not in choice else [])


def test_a_named_entity_with_relations_adds_the_graph_to_the_llm_routers_vector_choice() -> None:
    service = EntityMatch("svc:a", NodeKind.ENTITY, "Service", "logistics-server-a", 3)
    choice = parse_routes('{"routes": ["vector", "text2cypher"], "reasons": ["x"]}', AUTO_ROUTES)
    route = plan_route(
        RetrievalMode.AUTO,
        question=classify_question("what is connected to logistics-server-a"),
        entities=[service],
        llm_choice=choice.routes,
    )
    assert route.retrievers == [RetrieverName.VECTOR, RetrieverName.GRAPH]
    assert route.reasons[0] == "llm router chose vector"
    assert any("graph route added" in r for r in route.reasons)
