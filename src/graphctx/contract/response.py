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

_FROZEN = ConfigDict(strict=True, extra="forbid", frozen=True, use_attribute_docstrings=True)


class Span(BaseModel):
    """Half-open character range into the original document text."""

    model_config = _FROZEN

    start_char: Annotated[int, Field(ge=0)]
    """The first character of the item's content in the document text (0-based)."""
    end_char: Annotated[int, Field(ge=0)]
    """One past the last character: ``text[start_char:end_char]`` is the content."""

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end_char < self.start_char:
            raise ValueError("end_char must not precede start_char")
        return self


class PageRange(BaseModel):
    """The pages (1-based, inclusive) of a paged source, a PDF, that an item's span lies on."""

    model_config = _FROZEN

    first: Annotated[int, Field(ge=1)]
    """The first page, counted from 1."""
    last: Annotated[int, Field(ge=1)]
    """The last page (the first, for one page)."""

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
    """What kind of node this step is."""
    id: str
    """The node's id (a document, chunk, entity, concept, claim or evidence id)."""
    via: str | None = None
    """The relation followed to reach this node; null for the first step."""


class RetrievalScores(BaseModel):
    """How each retriever scored an item: retrieval evidence only, not the bundle's order.

    The order is the item's ``rank``: the packer puts stale evidence after all other evidence
    and, under a tight budget, evidence with information of its own before further support
    for a claim already covered, so ``fused`` need not decrease down the bundle. Sort by
    ``rank`` (or keep the list order), never by a score."""

    model_config = _FROZEN

    vector: float | None = None
    """Cosine similarity between the query and the chunk; null when vector search did not
    find it."""
    fulltext: float | None = None
    """1/rank among the caller's visible full-text hits (raw BM25 depends on index-wide
    statistics over hidden documents, so it is never returned); null when full-text search
    did not find it."""
    graph: float | None = None
    """The graph expansion score; null when the graph walk did not reach the item."""
    fused: float
    """The retrieval score: reciprocal-rank fusion of the lists that found the item (plus
    graph propagation). It ranked the candidates before packing; it is not the bundle's
    order, which is ``rank``."""


class EvidenceItem(BaseModel):
    """One piece of evidence in the bundle, with where it comes from and how it was found."""

    model_config = _FROZEN

    citation_id: Annotated[str, Field(pattern=r"^S[1-9][0-9]*$")]
    """The prompt-local citation id, ``S<rank>``: cite the item by it."""
    rank: Annotated[int, Field(ge=1)]
    """The item's 1-based position in the bundle: the order to present evidence in (1 is
    first). Use it, not ``retrieval_scores.fused``, to sort."""
    claim_id: str | None = None
    """The claim this evidence supports, when it came from a claim; null otherwise."""
    content: str
    """The evidence text: exactly the document text of ``span`` (cut at a sentence boundary
    when ``truncated``)."""
    source_uri: str
    """Where the document comes from (a path, URL or URI given at ingest)."""
    document_id: str
    """The id of the document the item is part of."""
    chunk_id: str
    """The id of the stored chunk the item is cut from."""
    document_version: str
    """The version of the document the content was read from."""
    freshness: Freshness
    """Whether the document version is valid now (current), superseded or expired (stale),
    or lacks timestamps (unknown)."""
    provenance_path: Annotated[list[ProvenanceStep], Field(min_length=1)]
    """The nodes that led to the item: its document and chunk, and for graph-reached items
    the entities, concepts and relations walked."""
    retrieval_scores: RetrievalScores
    """What each retriever scored the item (retrieval evidence, not the bundle's order)."""
    span: Span
    """The character range of ``content`` in the document text."""
    truncated: bool = False
    """True when the content was cut short to fit the token budget."""
    tokens: Annotated[int, Field(ge=0)]
    """The content's length in tokens, as counted against ``max_tokens``."""
    pages: OptionalPages = None

    @model_validator(mode="after")
    def _rank_matches_citation(self) -> Self:
        if self.citation_id != f"S{self.rank}":
            raise ValueError("citation_id must be S<rank>")
        return self


class Limits(BaseModel):
    """The budgets of the request and what the bundle used of them."""

    model_config = _FROZEN

    used_tokens: Annotated[int, Field(ge=0)]
    """Tokens the items' content uses (never more than ``max_tokens``)."""
    max_tokens: Annotated[int, Field(gt=0)]
    """The request's token budget."""
    elapsed_ms: Annotated[int, Field(ge=0)]
    """How long the request took, in milliseconds."""
    timeout_ms: Annotated[int, Field(gt=0)]
    """The request's deadline, in milliseconds."""


class Denial(BaseModel):
    """Evidence that was withheld, counted per stage; never names the item."""

    model_config = _FROZEN

    stage: str
    """The pipeline stage that withheld the evidence."""
    reason: DenialReason
    """Why it was withheld."""
    count: Annotated[int, Field(gt=0)]
    """How many items that stage withheld for that reason."""


class StageReport(BaseModel):
    """How one pipeline stage ran."""

    model_config = _FROZEN

    stage: str
    """The stage's name (e.g. ``fulltext``, ``vector``, ``fuse``, ``expand``, ``pack``)."""
    status: StageStatus
    """Whether it completed, timed out, failed or was skipped."""
    elapsed_ms: Annotated[int, Field(ge=0)]
    """How long it ran, in milliseconds."""
    budget_ms: Annotated[int, Field(ge=0)] | None = None
    """Its share of the request's deadline, in milliseconds; null when it had none."""
    candidates: Annotated[int, Field(ge=0)] = 0
    """How many candidates it produced."""
    detail: str | None = None
    """A short note on the outcome (why it was skipped or failed); null when there is none."""


class RouteDecision(BaseModel):
    """Which retrievers the router chose for the request, and why."""

    model_config = _FROZEN

    requested_mode: RetrievalMode
    """The request's ``retrieval_mode``."""
    retrievers: list[RetrieverName]
    """The retrievers whose results joined the ranking."""
    reasons: list[str]
    """Why the route was chosen, one sentence each."""


class TokenUsage(BaseModel):
    """Tokens a model call reported (the endpoint's own ``usage`` counts)."""

    model_config = _FROZEN

    prompt_tokens: Annotated[int, Field(ge=0)] = 0
    """Tokens of the prompt, as the endpoint counted them."""
    completion_tokens: Annotated[int, Field(ge=0)] = 0
    """Tokens of the model's reply, as the endpoint counted them."""


class RewriteContribution(BaseModel):
    """One rewritten query the model proposed and what its candidates did to the ranking."""

    model_config = _FROZEN

    query: str
    """The rewritten query, as the model proposed it."""
    added: list[str] = Field(default_factory=list)
    """Chunk ids its candidates brought into the pool."""
    raised: list[str] = Field(default_factory=list)
    """Chunk ids its candidates moved up the ranking."""


class ModelStageReport(BaseModel):
    """An optional LLM stage (query rewrite, LLM router, rerank) as it ran. Its status and
    timing are in ``stages`` under the same ``stage`` name."""

    model_config = _FROZEN

    stage: str
    """The stage's name, as in ``stages``."""
    model: str
    """The chat model that was asked."""
    prompt_version: str
    """The version of the stage's prompt (part of the response cache key)."""
    cached: bool = False
    """True when the reply came from the response cache (no model call, no tokens)."""
    usage: TokenUsage | None = None
    """The tokens the call cost; null when the endpoint reported none."""
    applied: bool = False
    """True when the stage changed the pipeline; false when it was skipped or failed."""
    rewrites: list[RewriteContribution] = Field(default_factory=list)
    """Query rewrite: each rewritten query and its contribution."""
    routes: list[RetrieverName] = Field(default_factory=list)
    """LLM router: the routes it chose among those the request's mode allows."""
    ignored: list[str] = Field(default_factory=list)
    """LLM router: routes it named that the request's mode does not allow."""
    reasons: list[str] = Field(default_factory=list)
    """LLM router: its reasons for the choice."""
    order: list[str] = Field(default_factory=list)
    """Rerank: chunk ids in the order the model gave."""


class ManifestBlock(BaseModel):
    """One packed block, auditable without storing its text."""

    model_config = _FROZEN

    citation_id: str
    """The citation id of the item this block became."""
    chunk_id: str
    """The chunk the block was cut from."""
    document_version: str
    """The document version the block was read from."""
    tokens: Annotated[int, Field(ge=0)]
    """The block's length in tokens."""
    truncated: bool
    """True when the block was cut short to fit the budget."""
    content_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """SHA-256 (hex) of the block's content, to audit it without storing the text."""


class Manifest(BaseModel):
    """How the bundle was produced: route, stages, counters, models, packed blocks.

    ``partial`` is true when a stage timed out or failed, so the bundle may lack evidence
    that stage would have contributed. ``deadline_stage`` names the first stage that ran out
    of its share of ``timeout_ms`` (a ``timed_out`` entry of ``stages``); null when none did.
    """

    model_config = _FROZEN

    namespace: str
    """The project (namespace) that was searched."""
    prompt_version: str
    """The version of the context builder's rendering and packing rules."""
    route: RouteDecision
    """Which retrievers ran, and why."""
    stages: list[StageReport]
    """Every stage that ran, in order, with its status and timing."""
    partial: bool
    """True when a stage timed out or failed, so evidence may be missing."""
    deadline_stage: str | None = None
    """The first stage that ran out of its share of ``timeout_ms``; null when none did."""
    token_counter: str
    """The tokenizer that counted ``tokens`` and ``used_tokens``."""
    embedder: str
    """The embedding model used for vector search."""
    effective_scope_count: Annotated[int, Field(ge=0)]
    """How many scopes the request could read (grants intersected with ``allowed_scopes``)."""
    dropped_for_freshness: Annotated[int, Field(ge=0)] = 0
    """Candidates left out because they were not valid at ``freshness_required_at``."""
    packing_drops: dict[str, int] = Field(default_factory=dict)
    """Candidates the packer left out, counted by reason (e.g. over budget, duplicate)."""
    blocks: list[ManifestBlock] = Field(default_factory=list)
    """One entry per packed item, in bundle order."""
    model_stages: list[ModelStageReport] = Field(default_factory=list)
    """The optional LLM stages that ran (query rewrite, LLM router, rerank); empty when off."""

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
    """The evidence bundle: items in ``rank`` order within the budgets, what was withheld,
    and how the bundle was made."""

    model_config = _FROZEN

    answerable: bool
    """True when the bundle holds evidence; false comes with a ``reason`` and no items."""
    reason: UnanswerableReason | None = None
    """Why there is no evidence (machine-readable); null when ``answerable``."""
    items: list[EvidenceItem]
    """The evidence, in bundle order: ``items[i].rank == i + 1``, citation ids S1..Sn."""
    limits: Limits
    """The token and time budgets and what the bundle used."""
    denied: list[Denial]
    """Evidence withheld by the access checks, counted; never names the items."""
    trace_id: str
    """The request's trace id, also in the logs."""
    manifest: Manifest
    """How the bundle was produced: route, stages, counters and packed blocks."""

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
