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
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_MS,
    MAX_QUERY_CHARS,
    MAX_SCOPES,
    MAX_TIMEOUT_MS,
    MAX_TOKENS_LIMIT,
    NamespaceName,
    PrincipalId,
    ScopeName,
)
from graphctx.ingest.source import DocumentMetadata
from graphctx.store.records import WriteOutcome

__all__ = [
    "ContextBody",
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
_OUT = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
_IN = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class DocumentError(BaseModel):
    """Why one document or file was not ingested."""

    model_config = _OUT

    origin: str
    """Where it was in the request: ``documents[i]``, ``files[i]`` or the file name."""
    code: str
    """The stable error code (e.g. ``unsupported_format``, ``empty_document``)."""
    message: str
    """What went wrong, for a person."""


class Problem(BaseModel):
    """RFC 9457 problem details, with graphctx's stable ``code``."""

    model_config = _IN

    type: str
    """A URI naming the problem type: ``urn:graphctx:problem:<code>``."""
    title: str
    """The HTTP status phrase."""
    status: int
    """The HTTP status code."""
    detail: str
    """What went wrong, for a person; operator errors carry a fixed sentence (the cause is in
    the log under the trace id)."""
    code: str
    """The stable, machine-readable error code (e.g. ``invalid_request``, ``not_found``,
    ``rate_limited``)."""
    retryable: bool
    """True when the same request may succeed later (see ``Retry-After``)."""
    trace_id: str | None = None
    """The request's trace id, also in the ``X-Trace-Id`` header and the logs."""
    field: str | None = None
    """The request field at fault, dotted (e.g. ``allowed_scopes.0``); absent when none."""
    retry_after_s: int | None = None
    """Seconds to wait before retrying (also in ``Retry-After``); absent when not rate limited."""
    errors: list[DocumentError] | None = None
    """For ``nothing_ingested``: why each document or file was refused; absent otherwise."""


class ContextBody(BaseModel):
    """The body of ``POST /v1/context``: the :class:`~graphctx.contract.ContextRequest`
    contract, validated as strictly, whose identity may be left to the API key. The service
    turns it into a ContextRequest once the caller is authenticated."""

    model_config = ConfigDict(strict=True, extra="forbid", use_attribute_docstrings=True)

    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
    """The question, in natural language: at least one non-whitespace character, no control
    characters, at most 4,000 characters."""
    principal_id: PrincipalId | None = None
    """Who the evidence is for; omitted: the key's own principal. Another one needs a key that
    may impersonate."""
    allowed_scopes: (
        Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)] | None
    ) = None
    """The scopes the caller allows for this request (1 to 256 names); they only narrow the
    key's grant. Omitted: every scope the key holds in the project."""
    namespace: NamespaceName = "default"
    """The project (namespace) to search; every request is bound to exactly one."""
    retrieval_mode: RetrievalMode = RetrievalMode.AUTO
    """Which retrieval routes are allowed; ``auto`` lets the router decide."""
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] = DEFAULT_MAX_TOKENS
    """The token budget of the bundle's content; the bundle never exceeds it."""
    timeout_ms: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)] = DEFAULT_TIMEOUT_MS
    """The deadline of the whole request, in milliseconds; stages that run out of their share
    are reported as timed out and the bundle is marked partial."""
    freshness_required_at: AwareDatetime | None = None
    """When set (a timestamp with a time zone), only evidence valid at that instant is
    returned; null: evidence valid now, stale items marked as such."""
    trace_id: Annotated[str, Field(pattern=TRACE_ID_PATTERN)] | None = None
    """Correlates the request with its logs and response; omitted: the ``X-Trace-Id``
    header's or a new one."""


class SearchRequest(BaseModel):
    """The simple search form. Omitted scopes mean "everything granted in this project"."""

    model_config = _IN

    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
    """The question, in natural language (at most 4,000 characters)."""
    limit: Annotated[int, Field(ge=1, le=500)] | None = None
    """How many results to return at most; omitted: the service's default (5), capped by its
    ``max_results`` (50)."""
    allowed_scopes: (
        Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)] | None
    ) = None
    """Narrow the search to these scopes; omitted: every scope the key holds in the project."""
    principal_id: PrincipalId | None = None
    """Act for this principal; omitted: the key's own. Another one needs a key that may
    impersonate."""
    retrieval_mode: RetrievalMode = RetrievalMode.AUTO
    """Which retrieval routes are allowed; ``auto`` lets the router decide."""
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] | None = None
    """The token budget of the results' content; omitted: the contract's default (2,000)."""
    timeout_ms: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)] | None = None
    """The request's deadline in milliseconds; omitted: the contract's default (3,000)."""
    freshness_required_at: AwareDatetime | None = None
    """Only evidence valid at this instant (a timestamp with a time zone); omitted: now."""
    trace_id: Annotated[str, Field(pattern=TRACE_ID_PATTERN)] | None = None
    """Correlates the request with its logs; omitted: the ``X-Trace-Id`` header's or a new one."""


class SearchResult(BaseModel):
    """One search result: an evidence item in the search form's shape."""

    model_config = _OUT

    rank: int
    """The result's 1-based position: the order to present results in. Sort by it, not by
    ``score``."""
    content: str
    """The evidence text (exactly the document text of ``span``)."""
    source: str
    """Where the document comes from (its source URI)."""
    score: float
    """The retrieval score (``retrieval_scores.fused``); it need not decrease down the
    results: the order is ``rank``."""
    citation_id: str
    """The prompt-local citation id, ``S<rank>``."""
    document_id: str
    """The id of the document the result is part of."""
    chunk_id: str
    """The id of the stored chunk the result is cut from."""
    document_version: str
    """The version of the document the content was read from."""
    freshness: Freshness
    """Whether the document version is current, stale or of unknown validity."""
    provenance_path: list[ProvenanceStep]
    """The nodes that led to the result, from its document on."""
    retrieval_scores: RetrievalScores
    """What each retriever scored the result."""
    span: Span
    """The character range of ``content`` in the document text."""
    truncated: bool
    """True when the content was cut short to fit the token budget."""
    pages: OptionalPages = None


class SearchResponse(BaseModel):
    """The results of a project search, in ``rank`` order."""

    model_config = _OUT

    query: str
    """The question that was searched."""
    limit: int
    """The most results that could be returned."""
    results: list[SearchResult]
    """The results, best first: ``results[i].rank == i + 1``."""
    answerable: bool
    """True when there are results; false comes with a ``reason``."""
    reason: UnanswerableReason | None
    """Why there are no results (machine-readable); null when ``answerable``."""
    denied: list[Denial]
    """Evidence withheld by the access checks, counted; never names the items."""
    limits: Limits
    """The token and time budgets and what the search used."""
    trace_id: str
    """The request's trace id, also in the logs."""


class RenderedMessage(BaseModel):
    """One chat message in the OpenAI-compatible ``{"role", "content"}`` shape."""

    model_config = _OUT

    role: Literal["system", "user"]
    """``system`` (the fixed instruction) or ``user`` (the question and the sources)."""
    content: str
    """The message text."""


class RenderedContext(BaseModel):
    """A bundle and the chat messages rendered from exactly its items: the fixed system
    instruction, then the question and one ``<source id="Sn">`` block per item."""

    model_config = _OUT

    bundle: ContextResponse
    """The evidence bundle the messages were rendered from."""
    messages: list[RenderedMessage]
    """The chat messages: the system instruction, then the user message with the sources."""


class SourceSummary(BaseModel):
    """One stored version of a document the caller may see."""

    model_config = _OUT

    document_id: str
    """The document's id."""
    document_version: str
    """This version's id."""
    source_uri: str
    """Where the document comes from."""
    title: str | None
    """The document's title; null when it has none."""
    chunk_count: int
    """How many chunks of this version the caller may see."""
    superseded: bool
    """True when a newer version replaced this one."""


class SourceList(BaseModel):
    """The documents of a project visible to the caller, every version."""

    model_config = _OUT

    project_id: str
    """The project listed."""
    documents: list[SourceSummary]
    """One entry per visible document version."""


class ProjectAccess(BaseModel):
    """One project the caller may read, with every scope it holds there."""

    model_config = _OUT

    project_id: str
    """The project's id."""
    scopes: list[str]
    """Every scope the caller holds in it."""


class WhoAmI(BaseModel):
    """Who the authenticated caller is: its principal and what it may read, nothing else."""

    model_config = _OUT

    principal_id: str
    """The principal the caller acts as."""
    projects: list[ProjectAccess]
    """The projects the caller may read, with its scopes in each."""


class SourceExcerpt(BaseModel):
    """More of a cited document around one chunk: ``text`` is exactly the document version's
    text from ``start_char`` to ``end_char``, built only from chunks the caller may see."""

    model_config = _OUT

    project_id: str
    """The project the document is in."""
    document_id: str
    """The document's id."""
    document_version: str
    """The version the text was read from."""
    source_uri: str
    """Where the document comes from."""
    title: str | None
    """The document's title; null when it has none."""
    chunk_id: str
    """The chunk the excerpt is centred on."""
    superseded: bool
    """True when a newer version replaced this one."""
    start_char: int
    """Where the excerpt starts in the document text."""
    end_char: int
    """Where it ends (exclusive)."""
    text: str
    """The document text from ``start_char`` to ``end_char``."""
    used_tokens: int
    """The excerpt's length in tokens."""
    max_tokens: int
    """The token budget the excerpt was cut to."""
    truncated_before: bool
    """True when visible text before the excerpt was left out."""
    truncated_after: bool
    """True when visible text after the excerpt was left out."""


class DocumentIn(BaseModel):
    """One document sent as JSON. ``media_type: markdown`` also reads YAML front matter;
    explicit fields win over front matter."""

    model_config = _IN

    document_id: DocumentId
    """The document's id in the project; sending it again with other text makes a new
    version."""
    text: Annotated[str, Field(min_length=1)]
    """The document's full text (not only whitespace)."""
    media_type: Literal["markdown", "text", "code"] = "text"
    """How to read and chunk the text; ``markdown`` also reads YAML front matter."""
    source_uri: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
    """Where the document comes from; omitted: the document id."""
    title: Annotated[str, Field(max_length=1024)] | None = None
    """The document's title."""
    scopes: Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)] | None = None
    """Who may read the document; each must be a scope the key holds. Omitted: the request's
    ``scopes``."""
    source_version: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    """The version the source system gives the document; omitted: a hash of the content."""
    created_at: datetime | None = None
    """When the document was created at its source."""
    updated_at: datetime | None = None
    """When the document was last changed at its source."""
    valid_from: datetime | None = None
    """From when the document is valid (earlier: not yet current)."""
    valid_to: datetime | None = None
    """Until when the document is valid (later: stale)."""
    superseded_by: DocumentId | None = None
    """The id of the document that replaces this one (this one is then stale)."""
    metadata: dict[
        Annotated[str, Field(min_length=1, max_length=128)], str | int | float | bool
    ] = Field(default_factory=dict)
    """Further metadata, kept with the document; keys must not be the fields above."""

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
    """Documents to ingest as JSON."""

    model_config = _IN

    documents: Annotated[list[DocumentIn], Field(min_length=1)]
    """The documents, at least one (at most the service's ``max_documents``)."""
    scopes: Annotated[list[ScopeName], Field(max_length=MAX_SCOPES)] = Field(default_factory=list)
    """The scopes of every document that sets none of its own."""


class DocumentOutcome(BaseModel):
    """What ingest did with one document."""

    model_config = _OUT

    origin: str
    """Where the document was in the request: ``documents[i]`` or the uploaded file name."""
    document_id: str
    """The document's id."""
    outcome: WriteOutcome
    """What was written: a new document, a new version, new scopes, or nothing."""
    version: str
    """The stored version's id."""
    chunks: int
    """How many chunks were written."""


class IngestResult(BaseModel):
    """The ingest report: one outcome per ingested document, one error per refused one."""

    model_config = _OUT

    project_id: str
    """The project written to."""
    documents: list[DocumentOutcome]
    """The documents ingested."""
    errors: list[DocumentError]
    """The documents or files refused, each with its reason."""
    chunks_written: int
    """How many chunks were written in all."""


class DeleteResult(BaseModel):
    """What a delete removed."""

    model_config = _OUT

    project_id: str
    """The project deleted from."""
    document_id: str
    """The document deleted."""
    deleted_versions: int
    """How many versions were removed."""
