"""Route planning: which retrievers a request runs, and why (recorded in the manifest).

``auto`` decides from what the store says, not from cue words: it runs full-text and vector
search, walks the graph from the confident anchors (and from the entities the query names),
and keeps the graph's ranking only when that evidence is there (:func:`graph_verdict`): a
visible entity with relations named in the query (ontology augmentation, seed 004), anchors
whose propagated scores meet on the same chunks, or propagation that changes the top of the
ranking. Otherwise the hybrid ranking stands. The question type found by cue words is
recorded and decides the walk's depth. An optional LLM router may choose first; ontology
augmentation only ever adds a route, never removes one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphctx.contract import RetrievalMode, RetrieverName, RouteDecision
from graphctx.retrieve.entities import DEFAULT_ENTITY_TYPE_ORDER, order_matches
from graphctx.retrieve.question_type import QuestionClass
from graphctx.store.records import EntityMatch

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
        reasons = ["auto: full-text and vector search"]
        if graph_available:
            chosen.append(RetrieverName.GRAPH)
            reasons.append("auto: the graph is walked; its ranking joins only on evidence")
    if question is not None:
        cues = f" (cues: {', '.join(question.cues)})" if question.cues else ""
        reasons.append(f"auto: {question.type.value} question{cues}")
    reasons.extend(_augment(chosen, entities, type_order))
    return RouteDecision(requested_mode=mode, retrievers=chosen, reasons=reasons)


TOP_DEPTH = 10  # the top of the ranking a graph walk must change to join


@dataclass(frozen=True)
class GraphVerdict:
    joins: bool
    reason: str


def graph_verdict(
    before: Sequence[str],
    after: Sequence[str],
    supported: Mapping[str, int],
    entities: Sequence[EntityMatch],
    anchors: int,
) -> GraphVerdict:
    """Whether the walk's ranking replaces the hybrid one, from what the walk found.

    ``before`` / ``after`` are chunk ids ranked without and with the propagated scores;
    ``supported`` counts, per reached chunk, the anchors (and seed set) whose paths reach it.
    """
    related = [m for m in entities if m.relation_count > 0]
    top_before = set(before[:TOP_DEPTH])
    entered = [c for c in after[:TOP_DEPTH] if c not in top_before]
    agreeing = sum(1 for c in after[:TOP_DEPTH] if supported.get(c, 0) > 1)
    moved = list(after[:TOP_DEPTH]) != list(before[:TOP_DEPTH])
    facts = (
        f"from {anchors} anchor(s), {len(entered)} chunk(s) entered the top {TOP_DEPTH},"
        f" {agreeing} of it reached from several anchors"
    )
    if related:
        return GraphVerdict(True, f"graph joins: a named entity has visible relations; {facts}")
    if moved:
        return GraphVerdict(True, f"graph joins: propagation reorders the top {TOP_DEPTH}; {facts}")
    return GraphVerdict(False, f"graph left out: the top {TOP_DEPTH} is unchanged; {facts}")


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
