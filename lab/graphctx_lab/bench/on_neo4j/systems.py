"""The systems the Neo4j comparison ranks, and the cut-offs it scores them at."""

from __future__ import annotations

__all__ = [
    "GRAPHCTX_ALL",
    "GRAPHCTX_SCOPED",
    "HYBRID",
    "HYBRID_CYPHER",
    "HYBRID_RAW",
    "RECALL_KS",
    "SYSTEMS",
    "TOP_K",
]

TOP_K = 10
RECALL_KS = (5, 10)

GRAPHCTX_ALL = "graphctx (all scopes)"
GRAPHCTX_SCOPED = "graphctx (1-3 scopes)"
HYBRID = "HybridRetriever"
HYBRID_CYPHER = "HybridCypherRetriever"
HYBRID_RAW = "HybridRetriever (raw question)"
SYSTEMS = (GRAPHCTX_ALL, GRAPHCTX_SCOPED, HYBRID, HYBRID_CYPHER, HYBRID_RAW)
