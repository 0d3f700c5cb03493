"""Guarded Text2Cypher retrieval (``retrieval_mode=text2cypher``), off unless configured."""

from graphctx.retrieve.text2cypher.guard import (
    GuardedStatement,
    GuardPolicy,
    Rejection,
    guard_statement,
)
from graphctx.retrieve.text2cypher.retriever import (
    CypherReader,
    Text2CypherConfig,
    Text2CypherOutcome,
    run_text2cypher,
)

__all__ = [
    "CypherReader",
    "GuardPolicy",
    "GuardedStatement",
    "Rejection",
    "Text2CypherConfig",
    "Text2CypherOutcome",
    "guard_statement",
    "run_text2cypher",
]
