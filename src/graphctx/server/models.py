"""Wire models of the service faces (the full contract lives in :mod:`graphctx.contract`)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from graphctx.contract import (
    ContextResponse,
    Denial,
    Freshness,
    Limits,
    OptionalPages,
    ProvenanceStep,
    RetrievalMode,
    RetrievalScores,
    Span,
    UnanswerableReason,
)
from graphctx.contract.request import (
    MAX_QUERY_CHARS,
    MAX_SCOPES,
    MAX_TIMEOUT_MS,
    MAX_TOKENS_LIMIT,
    PrincipalId,
    ScopeName,
)
from graphctx.ingest.source import DocumentMetadata
from graphctx.store.records import WriteOutcome

__all__ = [
    "DeleteResult",
    "DocumentError",
    "DocumentIn",
    "DocumentOutcome",
    "IngestRequest",
    "IngestResult",
    "Problem",
    "ProjectAccess",
    "RenderedContext",
    "RenderedMessage",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "SourceExcerpt",
    "SourceList",
    "SourceSummary",
    "WhoAmI",
]

MAX_DOCUMENT_ID_CHARS = 512
TRACE_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
DocumentId = Annotated[
    str, Field(min_length=1, max_length=MAX_DOCUMENT_ID_CHARS, pattern=r"^[^\x00-\x1f\x7f]+$")
]
_RESERVED_METADATA = frozenset(f.name for f in dataclasses.fields(DocumentMetadata)) - {"extra"}
_OUT = ConfigDict(extra="forbid", frozen=True)


class Problem(BaseModel):
    """RFC 9457 problem details, with graphctx's stable ``code``."""

    model_config = ConfigDict(extra="forbid")

    type: str
    title: str
    status: int
    detail: str
    code: str
    retryable: bool
    trace_id: str | None = None
    field: str | None = None
    retry_after_s: int | None = None


class SearchRequest(BaseModel):
    """The simple search form. Omitted scopes mean "everything granted in this project"."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
    limit: Annotated[int, Field(ge=1, le=500)] | None = None
    allowed_scopes: (
        Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)] | None
    ) = None
    principal_id: PrincipalId | None = None
    retrieval_mode: RetrievalMode = RetrievalMode.AUTO
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] | None = None
    timeout_ms: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)] | None = None
    freshness_required_at: AwareDatetime | None = None
    trace_id: Annotated[str, Field(pattern=TRACE_ID_PATTERN)] | None = None


class SearchResult(BaseModel):
    model_config = _OUT

    content: str
    source: str
    score: float
    citation_id: str
    document_id: str
    chunk_id: str
    document_version: str
    freshness: Freshness
    provenance_path: list[ProvenanceStep]
    retrieval_scores: RetrievalScores
    span: Span
    truncated: bool
    pages: OptionalPages = None


class SearchResponse(BaseModel):
    model_config = _OUT

    query: str
    limit: int
    results: list[SearchResult]
    answerable: bool
    reason: UnanswerableReason | None
    denied: list[Denial]
    limits: Limits
    trace_id: str


class RenderedMessage(BaseModel):
    """One chat message in the OpenAI-compatible ``{"role", "content"}`` shape."""

    model_config = _OUT

    role: Literal["system", "user"]
    content: str


class RenderedContext(BaseModel):
    """A bundle and the chat messages rendered from exactly its items: the fixed system
    instruction, then the question and one ``<source id="Sn">`` block per item."""

    model_config = _OUT

    bundle: ContextResponse
    messages: list[RenderedMessage]


class SourceSummary(BaseModel):
    model_config = _OUT

    document_id: str
    document_version: str
    source_uri: str
    title: str | None
    chunk_count: int
    superseded: bool


class SourceList(BaseModel):
    model_config = _OUT

    project_id: str
    documents: list[SourceSummary]


class ProjectAccess(BaseModel):
    """One project the caller may read, with every scope it holds there."""

    model_config = _OUT

    project_id: str
    scopes: list[str]


class WhoAmI(BaseModel):
    """Who the authenticated caller is: its principal and what it may read, nothing else."""

    model_config = _OUT

    principal_id: str
    projects: list[ProjectAccess]


class SourceExcerpt(BaseModel):
    """More of a cited document around one chunk: ``text`` is exactly the document version's
    text from ``start_char`` to ``end_char``, built only from chunks the caller may see."""

    model_config = _OUT

    project_id: str
    document_id: str
    document_version: str
    source_uri: str
    title: str | None
    chunk_id: str
    superseded: bool
    start_char: int
    end_char: int
    text: str
    used_tokens: int
    max_tokens: int
    truncated_before: bool
    truncated_after: bool


class DocumentIn(BaseModel):
    """One document sent as JSON. ``media_type: markdown`` also reads YAML front matter;
    explicit fields win over front matter."""

    model_config = ConfigDict(extra="forbid")

    document_id: DocumentId
    text: Annotated[str, Field(min_length=1)]
    media_type: Literal["markdown", "text", "code"] = "text"
    source_uri: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
    title: Annotated[str, Field(max_length=1024)] | None = None
    scopes: Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)] | None = None
    source_version: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: DocumentId | None = None
    metadata: dict[
        Annotated[str, Field(min_length=1, max_length=128)], str | int | float | bool
    ] = Field(default_factory=dict)

    @field_validator("metadata")
    @classmethod
    def _no_reserved_keys(
        cls, value: dict[str, str | int | float | bool]
    ) -> dict[str, str | int | float | bool]:
        reserved = sorted(_RESERVED_METADATA.intersection(value))
        if reserved:
            raise ValueError(f"metadata must not set {', '.join(reserved)}; use the fields")
        return value


class IngestRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: Annotated[list[DocumentIn], Field(min_length=1)]
    scopes: Annotated[list[ScopeName], Field(max_length=MAX_SCOPES)] = Field(default_factory=list)


class DocumentOutcome(BaseModel):
    model_config = _OUT

    origin: str
    document_id: str
    outcome: WriteOutcome
    version: str
    chunks: int


class DocumentError(BaseModel):
    model_config = _OUT

    origin: str
    code: str
    message: str


class IngestResult(BaseModel):
    model_config = _OUT

    project_id: str
    documents: list[DocumentOutcome]
    errors: list[DocumentError]
    chunks_written: int


class DeleteResult(BaseModel):
    model_config = _OUT

    project_id: str
    document_id: str
    deleted_versions: int
