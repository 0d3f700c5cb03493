"""graphctx: permission-aware GraphRAG context for AI agents.

import graphctx
with graphctx.open("company.graphctx") as ctx:
    ctx.ingest_path("docs/", namespace="acme", scopes=["eng"])
    bundle = ctx.retrieve(graphctx.ContextRequest(
        query="How do I restart the payment gateway?", principal_id="sam",
        allowed_scopes=["eng"], namespace="acme"))
"""

from graphctx.adapters import open_provider as open
from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    EvidenceItem,
    Freshness,
    RetrievalMode,
    UnanswerableReason,
)
from graphctx.errors import GraphctxError
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants, ScopeGrants, StaticGrants

__all__ = [
    "CallerAssertedGrants",
    "ContextProvider",
    "ContextRequest",
    "ContextResponse",
    "EvidenceItem",
    "Freshness",
    "GraphctxError",
    "RetrievalMode",
    "ScopeGrants",
    "StaticGrants",
    "UnanswerableReason",
    "open",
]
