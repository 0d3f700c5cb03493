"""One example request and response per operation, for the OpenAPI document.

Every example is built from the wire models (so it validates, or this module fails at import)
and, where the service derives one answer from another, by the same code: the search results
and the rendered messages come from the example bundle exactly as the service makes them.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from pydantic import BaseModel

from graphctx.context import PROMPT_VERSION, messages_for_response
from graphctx.contract import (
    ContextResponse,
    EvidenceItem,
    Freshness,
    Limits,
    Manifest,
    ManifestBlock,
    NodeKind,
    ProvenanceStep,
    RetrievalMode,
    RetrievalScores,
    RetrieverName,
    RouteDecision,
    Span,
    StageReport,
    StageStatus,
)
from graphctx.server.models import (
    ContextBody,
    DeleteResult,
    DocumentIn,
    DocumentOutcome,
    IngestRequest,
    IngestResult,
    Problem,
    ProjectAccess,
    RenderedContext,
    RenderedMessage,
    SearchRequest,
    SearchResponse,
    SourceList,
    SourceSummary,
    WhoAmI,
)
from graphctx.server.service import search_result
from graphctx.store.records import WriteOutcome

__all__ = ["EXAMPLES", "example_of"]

QUESTION: Final = "How do I roll back a deploy?"
TRACE_ID: Final = "4bf92f3577b34da6a3ce929d0e0e4736"
_CONTENT = (
    "Alpha rolls back a deploy by switching the traffic split back to blue.",
    "Page the on-call engineer when the switch fails.",
)


def _item(rank: int, chunk: str, content: str, start: int, fused: float) -> EvidenceItem:
    return EvidenceItem(
        citation_id=f"S{rank}",
        rank=rank,
        content=content,
        source_uri="runbooks/rollback.md",
        document_id="runbooks/rollback.md",
        chunk_id=chunk,
        document_version="v3",
        freshness=Freshness.CURRENT,
        provenance_path=[
            ProvenanceStep(kind=NodeKind.DOCUMENT, id="runbooks/rollback.md"),
            ProvenanceStep(kind=NodeKind.CHUNK, id=chunk, via="HAS_CHUNK"),
        ],
        retrieval_scores=RetrievalScores(vector=0.71, fulltext=1.0 / rank, fused=fused),
        span=Span(start_char=start, end_char=start + len(content)),
        tokens=len(content.split()) + 3,
    )


_ITEMS: Final = [
    _item(1, "c-3f1a", _CONTENT[0], 0, 0.0325),
    _item(2, "c-9b02", _CONTENT[1], len(_CONTENT[0]) + 1, 0.0318),
]
_STAGES: Final = [
    StageReport(stage="candidates.fulltext", status=StageStatus.OK, elapsed_ms=4, budget_ms=1780),
    StageReport(stage="candidates.vector", status=StageStatus.OK, elapsed_ms=9, budget_ms=1780),
    StageReport(stage="fuse", status=StageStatus.OK, elapsed_ms=0, candidates=2),
    StageReport(stage="pack+gate", status=StageStatus.OK, elapsed_ms=1, candidates=2),
]
BUNDLE: Final = ContextResponse(
    answerable=True,
    items=_ITEMS,
    limits=Limits(
        used_tokens=sum(i.tokens for i in _ITEMS), max_tokens=600, elapsed_ms=18, timeout_ms=3000
    ),
    denied=[],
    trace_id=TRACE_ID,
    manifest=Manifest(
        namespace="alpha",
        prompt_version=PROMPT_VERSION,
        route=RouteDecision(
            requested_mode=RetrievalMode.AUTO,
            retrievers=[RetrieverName.FULLTEXT, RetrieverName.VECTOR],
            reasons=["auto: full-text and vector search", "auto: general question"],
        ),
        stages=_STAGES,
        partial=False,
        token_counter="o200k_base",
        embedder="use-multilingual-v3",
        effective_scope_count=1,
        blocks=[
            ManifestBlock(
                citation_id=i.citation_id,
                chunk_id=i.chunk_id,
                document_version=i.document_version,
                tokens=i.tokens,
                truncated=False,
                content_sha256=hashlib.sha256(i.content.encode()).hexdigest(),
            )
            for i in _ITEMS
        ],
    ),
)
CONTEXT_REQUEST: Final = ContextBody(
    query=QUESTION, namespace="alpha", max_tokens=600, trace_id=TRACE_ID
)
WHOAMI: Final = WhoAmI(
    principal_id="support-bot",
    projects=[ProjectAccess(project_id="alpha", scopes=["public", "support"])],
)
SEARCH_REQUEST: Final = SearchRequest(query=QUESTION, limit=5)
SEARCH_RESPONSE: Final = SearchResponse(
    query=QUESTION,
    limit=5,
    results=[search_result(i) for i in BUNDLE.items],
    answerable=True,
    reason=None,
    denied=[],
    limits=BUNDLE.limits,
    trace_id=TRACE_ID,
)
RENDERED: Final = RenderedContext(
    bundle=BUNDLE,
    messages=[
        RenderedMessage(role=m.role, content=m.content)
        for m in messages_for_response(QUESTION, BUNDLE)
    ],
)
INGEST_REQUEST: Final = IngestRequest(
    documents=[
        DocumentIn(
            document_id="runbooks/rollback.md",
            text="# Rollback\n\n" + " ".join(_CONTENT) + "\n",
            media_type="markdown",
            title="Rollback",
            source_version="v3",
        )
    ],
    scopes=["public"],
)
INGEST_RESULT: Final = IngestResult(
    project_id="alpha",
    documents=[
        DocumentOutcome(
            origin="documents[0]",
            document_id="runbooks/rollback.md",
            outcome=WriteOutcome.ADDED,
            version="v3",
            chunks=2,
        )
    ],
    errors=[],
    chunks_written=2,
)
SOURCE_LIST: Final = SourceList(
    project_id="alpha",
    documents=[
        SourceSummary(
            document_id="runbooks/rollback.md",
            document_version="v3",
            source_uri="runbooks/rollback.md",
            title="Rollback",
            chunk_count=2,
            superseded=False,
        )
    ],
)
DELETED: Final = DeleteResult(
    project_id="alpha", document_id="runbooks/rollback.md", deleted_versions=1
)
PROBLEM: Final = Problem(
    type="urn:graphctx:problem:invalid_request",
    title="Unprocessable Content",
    status=422,
    detail="query: String should have at most 4000 characters",
    code="invalid_request",
    retryable=False,
    trace_id=TRACE_ID,
    field="query",
)


def example_of(model: BaseModel) -> dict[str, Any]:
    """The JSON form of an example, as the service sends or reads it."""
    return model.model_dump(mode="json", exclude_none=isinstance(model, Problem | ContextBody))


# operationId -> (request example or None, response example)
EXAMPLES: Final[dict[str, tuple[BaseModel | None, BaseModel | dict[str, str] | str]]] = {
    "retrieveContext": (CONTEXT_REQUEST, BUNDLE),
    "renderContextMessages": (CONTEXT_REQUEST, RENDERED),
    "searchProject": (SEARCH_REQUEST, SEARCH_RESPONSE),
    "ingestDocuments": (INGEST_REQUEST, INGEST_RESULT),
    "listDocuments": (None, SOURCE_LIST),
    "deleteDocument": (None, DELETED),
    "whoAmI": (None, WHOAMI),
    "getHealth": (None, {"status": "ok"}),
    "getReadiness": (None, {"status": "ready"}),
    "getMetrics": (
        None,
        "# HELP graphctx_http_requests_total HTTP requests by route template and status.\n",
    ),
}
