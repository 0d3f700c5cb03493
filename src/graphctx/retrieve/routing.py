"""Route planning: which retrievers a request runs, and why (recorded in the manifest).

``auto`` decides by rules: relational, procedure, calculation and right questions expand
through the graph; simple lookups and other questions stay hybrid. An optional LLM router may
choose first. Ontology augmentation (seed 004) then looks the query's terms up among the
entities the principal can see and adds the graph route when a match has at least one visible
relation; it only ever adds a route, never removes one.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphctx.contract import RetrievalMode, RetrieverName, RouteDecision
from graphctx.retrieve.entities import DEFAULT_ENTITY_TYPE_ORDER, order_matches
from graphctx.retrieve.question_type import QuestionClass, QuestionType
from graphctx.store.records import EntityMatch

GRAPH_QUESTION_TYPES = frozenset(
    {
        QuestionType.RELATIONAL,
        QuestionType.PROCEDURE,
        QuestionType.CALCULATION,
        QuestionType.RIGHT,
    }
)
_HYBRID = (RetrieverName.FULLTEXT, RetrieverName.VECTOR)


def plan_route(
    mode: RetrievalMode,
    graph_available: bool = True,
    *,
    question: QuestionClass | None = None,
    entities: Sequence[EntityMatch] = (),
    llm_choice: Sequence[RetrieverName] | None = None,
    type_order: Sequence[str] = DEFAULT_ENTITY_TYPE_ORDER,
) -> RouteDecision:
    """auto: rules (+ optional LLM choice) + ontology augmentation; hybrid: full-text +
    vector; graph: hybrid anchors expanded through knowledge nodes."""
    hybrid = list(_HYBRID)
    if mode is RetrievalMode.TEXT2CYPHER:
        return RouteDecision(
            requested_mode=mode,
            retrievers=[],
            reasons=["text2cypher runs only on the Neo4j backend with a configured LLM"],
        )
    if mode is RetrievalMode.HYBRID:
        return RouteDecision(
            requested_mode=mode, retrievers=hybrid, reasons=["hybrid mode requested"]
        )
    if mode is RetrievalMode.GRAPH:
        if graph_available:
            return RouteDecision(
                requested_mode=mode,
                retrievers=[*hybrid, RetrieverName.GRAPH],
                reasons=["graph mode: hybrid anchors expanded through knowledge nodes"],
            )
        return RouteDecision(
            requested_mode=mode,
            retrievers=hybrid,
            reasons=["graph mode requested but the namespace has no knowledge nodes: hybrid"],
        )
    return _auto(question, entities, llm_choice, type_order, graph_available)


def _auto(
    question: QuestionClass | None,
    entities: Sequence[EntityMatch],
    llm_choice: Sequence[RetrieverName] | None,
    type_order: Sequence[str],
    graph_available: bool,
) -> RouteDecision:
    mode = RetrievalMode.AUTO
    if llm_choice is not None:
        chosen = list(dict.fromkeys(llm_choice)) or list(_HYBRID)
        reasons = [f"llm router chose {', '.join(r.value for r in chosen)}"]
    else:
        chosen = list(_HYBRID)
        reasons = ["auto: hybrid default"]
    if question is not None:
        cues = f" (cues: {', '.join(question.cues)})" if question.cues else ""
        if question.type in GRAPH_QUESTION_TYPES and llm_choice is None and graph_available:
            chosen.append(RetrieverName.GRAPH)
            reasons.append(f"auto: {question.type.value} question{cues} expands through the graph")
        elif question.type is QuestionType.SIMPLE_LOOKUP:
            reasons.append(f"auto: simple lookup{cues}: anchors are not expanded")
        else:
            reasons.append(f"auto: {question.type.value} question{cues}")
    reasons.extend(_augment(chosen, entities, type_order))
    return RouteDecision(requested_mode=mode, retrievers=chosen, reasons=reasons)


def _augment(
    chosen: list[RetrieverName], entities: Sequence[EntityMatch], type_order: Sequence[str]
) -> list[str]:
    """Ontology augmentation: add the graph route when a visible entity with a visible
    relation is named in the query (and say so when the route was already chosen). Mutates
    ``chosen``, only ever appending."""
    ordered = order_matches(entities, type_order)
    related = [m for m in ordered if m.relation_count > 0]
    if related:
        best = related[0]
        kind = best.node_type or best.kind.value
        found = (
            f"ontology: query term {best.key!r} is a visible {kind} with "
            f"{best.relation_count} visible relation(s)"
        )
        if RetrieverName.GRAPH in chosen:
            return [f"{found}: its neighbourhood is expanded"]
        chosen.append(RetrieverName.GRAPH)
        return [f"{found}: graph route added"]
    if ordered:
        return [f"ontology: query term {ordered[0].key!r} names a visible node without relations"]
    return []
