"""The request/response contract shared by every face. Pure models, no I/O."""

from graphctx.contract.enums import (
    DenialReason,
    Freshness,
    NodeKind,
    RetrievalMode,
    RetrieverName,
    StageStatus,
    UnanswerableReason,
)
from graphctx.contract.request import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_MS,
    MAX_QUERY_CHARS,
    ContextRequest,
)
from graphctx.contract.response import (
    ContextResponse,
    Denial,
    EvidenceItem,
    Limits,
    Manifest,
    ManifestBlock,
    OptionalPages,
    PageRange,
    ProvenanceStep,
    RetrievalScores,
    RouteDecision,
    Span,
    StageReport,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT_MS",
    "MAX_QUERY_CHARS",
    "ContextRequest",
    "ContextResponse",
    "Denial",
    "DenialReason",
    "EvidenceItem",
    "Freshness",
    "Limits",
    "Manifest",
    "ManifestBlock",
    "NodeKind",
    "OptionalPages",
    "PageRange",
    "ProvenanceStep",
    "RetrievalMode",
    "RetrievalScores",
    "RetrieverName",
    "RouteDecision",
    "Span",
    "StageReport",
    "StageStatus",
    "UnanswerableReason",
]
