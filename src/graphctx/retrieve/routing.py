"""Route planning: which retrievers a request runs."""

from __future__ import annotations

from graphctx.contract import RetrievalMode, RetrieverName, RouteDecision


def plan_route(mode: RetrievalMode, graph_available: bool) -> RouteDecision:
    """auto/hybrid: full-text + vector; graph: the same anchors plus graph expansion."""
    hybrid = [RetrieverName.FULLTEXT, RetrieverName.VECTOR]
    if mode is RetrievalMode.TEXT2CYPHER:
        return RouteDecision(
            requested_mode=mode,
            retrievers=[],
            reasons=["text2cypher runs only on the Neo4j backend with a configured LLM"],
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
    reason = "hybrid mode requested" if mode is RetrievalMode.HYBRID else "auto: hybrid default"
    return RouteDecision(requested_mode=mode, retrievers=hybrid, reasons=[reason])
