"""ContextResponse: the evidence bundle, its limits, denials and how it was made."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphctx.contract.enums import (
    DenialReason,
    Freshness,
    NodeKind,
    RetrievalMode,
    RetrieverName,
    StageStatus,
    UnanswerableReason,
)

_FROZEN = ConfigDict(strict=True, extra="forbid", frozen=True)


class Span(BaseModel):
    """Half-open character range into the original document text."""

    model_config = _FROZEN

    start_char: Annotated[int, Field(ge=0)]
    end_char: Annotated[int, Field(ge=0)]

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end_char < self.start_char:
            raise ValueError("end_char must not precede start_char")
        return self


class PageRange(BaseModel):
    """The pages (1-based, inclusive) of a paged source, a PDF, that an item's span lies on."""

    model_config = _FROZEN

    first: Annotated[int, Field(ge=1, description="The first page, counted from 1.")]
    last: Annotated[int, Field(ge=1, description="The last page (the first, for one page).")]

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.last < self.first:
            raise ValueError("last must not precede first")
        return self


def _is_none(value: object) -> bool:
    return value is None


# An item's pages: set for a paged source, left out of the JSON (not null) otherwise, so the
# items of unpaged sources serialize exactly as they did before the field existed.
OptionalPages = Annotated[
    PageRange | None,
    Field(
        exclude_if=_is_none,
        description="The pages the span lies on, for a paged source (PDF); absent otherwise.",
    ),
]


class ProvenanceStep(BaseModel):
    """One node on the path that led to an item; ``via`` is the relation used to reach it."""

    model_config = _FROZEN

    kind: NodeKind
    id: str
    via: str | None = None


class RetrievalScores(BaseModel):
    """Per-retriever evidence for an item. ``vector`` is the cosine similarity; ``fulltext`` is
    1/rank among the caller's visible full-text hits (raw BM25 depends on index-wide statistics
    over hidden documents, so it is never returned); ``graph`` the expansion score; ``fused``
    the reciprocal-rank fusion score that orders the bundle."""

    model_config = _FROZEN

    vector: float | None = None
    fulltext: float | None = None
    graph: float | None = None
    fused: float


class EvidenceItem(BaseModel):
    model_config = _FROZEN

    citation_id: Annotated[str, Field(pattern=r"^S[1-9][0-9]*$")]
    claim_id: str | None = None
    content: str
    source_uri: str
    document_id: str
    chunk_id: str
    document_version: str
    freshness: Freshness
    provenance_path: Annotated[list[ProvenanceStep], Field(min_length=1)]
    retrieval_scores: RetrievalScores
    span: Span
    truncated: bool = False
    tokens: Annotated[int, Field(ge=0)]
    pages: OptionalPages = None


class Limits(BaseModel):
    model_config = _FROZEN

    used_tokens: Annotated[int, Field(ge=0)]
    max_tokens: Annotated[int, Field(gt=0)]
    elapsed_ms: Annotated[int, Field(ge=0)]
    timeout_ms: Annotated[int, Field(gt=0)]


class Denial(BaseModel):
    """Evidence that was withheld, counted per stage; never names the item."""

    model_config = _FROZEN

    stage: str
    reason: DenialReason
    count: Annotated[int, Field(gt=0)]


class StageReport(BaseModel):
    model_config = _FROZEN

    stage: str
    status: StageStatus
    elapsed_ms: Annotated[int, Field(ge=0)]
    budget_ms: Annotated[int, Field(ge=0)] | None = None
    candidates: Annotated[int, Field(ge=0)] = 0
    detail: str | None = None


class RouteDecision(BaseModel):
    model_config = _FROZEN

    requested_mode: RetrievalMode
    retrievers: list[RetrieverName]
    reasons: list[str]


class TokenUsage(BaseModel):
    """Tokens a model call reported (the endpoint's own ``usage`` counts)."""

    model_config = _FROZEN

    prompt_tokens: Annotated[int, Field(ge=0)] = 0
    completion_tokens: Annotated[int, Field(ge=0)] = 0


class RewriteContribution(BaseModel):
    """One rewritten query the model proposed and what its candidates did to the ranking:
    the chunk ids it brought into the pool (``added``) and those it moved up (``raised``)."""

    model_config = _FROZEN

    query: str
    added: list[str] = Field(default_factory=list)
    raised: list[str] = Field(default_factory=list)


class ModelStageReport(BaseModel):
    """An optional LLM stage (query rewrite, LLM router, rerank) as it ran: the model, the
    prompt version, whether the reply came from the response cache, the tokens it cost, and
    what it did. Its status and timing are in ``stages`` under the same ``stage`` name."""

    model_config = _FROZEN

    stage: str
    model: str
    prompt_version: str
    cached: bool = False
    usage: TokenUsage | None = None  # None: the endpoint reported none
    applied: bool = False  # the stage changed the pipeline (False: skipped, failed)
    rewrites: list[RewriteContribution] = Field(default_factory=list)
    routes: list[RetrieverName] = Field(default_factory=list)  # the LLM router's choice
    ignored: list[str] = Field(default_factory=list)  # routes it named that were not allowed
    reasons: list[str] = Field(default_factory=list)  # the LLM router's reasons
    order: list[str] = Field(default_factory=list)  # rerank: chunk ids in the model's order


class ManifestBlock(BaseModel):
    """One packed block, auditable without storing its text."""

    model_config = _FROZEN

    citation_id: str
    chunk_id: str
    document_version: str
    tokens: Annotated[int, Field(ge=0)]
    truncated: bool
    content_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Manifest(BaseModel):
    """How the bundle was produced: route, stages, counters, models, packed blocks.

    ``partial`` is true when a stage timed out or failed, so the bundle may lack evidence
    that stage would have contributed. ``deadline_stage`` names the first stage that ran out
    of its share of ``timeout_ms`` (a ``timed_out`` entry of ``stages``); null when none did.
    """

    model_config = _FROZEN

    namespace: str
    prompt_version: str
    route: RouteDecision
    stages: list[StageReport]
    partial: bool
    deadline_stage: str | None = None
    token_counter: str
    embedder: str
    effective_scope_count: Annotated[int, Field(ge=0)]
    dropped_for_freshness: Annotated[int, Field(ge=0)] = 0
    packing_drops: dict[str, int] = Field(default_factory=dict)  # reason -> count
    blocks: list[ManifestBlock] = Field(default_factory=list)
    model_stages: list[ModelStageReport] = Field(default_factory=list)  # empty when off

    @model_validator(mode="after")
    def _deadline_stage_timed_out(self) -> Self:
        incomplete = {StageStatus.TIMED_OUT, StageStatus.FAILED}
        if any(s.status in incomplete for s in self.stages) and not self.partial:
            raise ValueError("a manifest with a timed-out or failed stage is partial")
        if self.deadline_stage is None:
            return self
        timed_out = [s.stage for s in self.stages if s.status is StageStatus.TIMED_OUT]
        if self.deadline_stage not in timed_out:
            raise ValueError("deadline_stage must name a timed_out stage")
        return self


class ContextResponse(BaseModel):
    model_config = _FROZEN

    answerable: bool
    reason: UnanswerableReason | None = None
    items: list[EvidenceItem]
    limits: Limits
    denied: list[Denial]
    trace_id: str
    manifest: Manifest

    @model_validator(mode="after")
    def _reason_matches_answerable(self) -> Self:
        if self.answerable and (self.reason is not None or not self.items):
            raise ValueError("an answerable response has items and no reason")
        if not self.answerable and (self.reason is None or self.items):
            raise ValueError("an unanswerable response has a reason and no items")
        ids = [item.citation_id for item in self.items]
        if ids != [f"S{n}" for n in range(1, len(ids) + 1)]:
            raise ValueError("citation ids must run S1..Sn without gaps")
        if self.limits.used_tokens > self.limits.max_tokens:
            raise ValueError("used_tokens exceeds max_tokens")
        return self
