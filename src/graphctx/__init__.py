"""graphctx: permission-aware GraphRAG context for AI agents.

import graphctx
with graphctx.open("company.graphctx") as ctx:
    ctx.ingest_path("docs/", namespace="acme", scopes=["eng"])
    bundle = ctx.retrieve(graphctx.ContextRequest(
        query="How do I restart the payment gateway?", principal_id="sam",
        allowed_scopes=["eng"], namespace="acme"))

Every name below loads on first use (PEP 562), so ``import graphctx`` is cheap: a command
or a subpackage pays only for what it touches.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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

_ORIGINS: _typing.Final = {  # public name -> (module, attribute)
    "CallerAssertedGrants": ("graphctx.retrieve.authorize", "CallerAssertedGrants"),
    "ContextProvider": ("graphctx.provider", "ContextProvider"),
    "ContextRequest": ("graphctx.contract", "ContextRequest"),
    "ContextResponse": ("graphctx.contract", "ContextResponse"),
    "EvidenceItem": ("graphctx.contract", "EvidenceItem"),
    "Freshness": ("graphctx.contract", "Freshness"),
    "GraphctxError": ("graphctx.errors", "GraphctxError"),
    "RetrievalMode": ("graphctx.contract", "RetrievalMode"),
    "ScopeGrants": ("graphctx.retrieve.authorize", "ScopeGrants"),
    "StaticGrants": ("graphctx.retrieve.authorize", "StaticGrants"),
    "UnanswerableReason": ("graphctx.contract", "UnanswerableReason"),
    "open": ("graphctx.adapters", "open_provider"),
}


def __getattr__(name: str) -> object:
    try:
        module, attribute = _ORIGINS[name]
    except KeyError:
        raise AttributeError(f"module 'graphctx' has no attribute {name!r}") from None
    value = getattr(_importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
