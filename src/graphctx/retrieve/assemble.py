"""Assembling the evidence bundle: ranked evidence, what the stages report, the final response.

The stages return what the manifest needs as a :class:`Trail` (reports, denials, notes on the
route); the provider joins them in request order and :func:`assemble_response` builds the
validated ContextResponse from them once, at the end (items with provenance, limits,
denials, manifest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from graphctx.context import PROMPT_VERSION, PackedBlock, PackResult, build_manifest, log_manifest
from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    Denial,
    EvidenceItem,
    Freshness,
    Limits,
    Manifest,
    ManifestBlock,
    ModelStageReport,
    NodeKind,
    PageRange,
    ProvenanceStep,
    RetrievalScores,
    RetrieverName,
    RouteDecision,
    Span,
    StageReport,
    StageStatus,
    UnanswerableReason,
)
from graphctx.retrieve.deadline import Deadline
from graphctx.retrieve.fusion import FusedCandidate
from graphctx.store.records import ChunkView, PathStep

__all__ = [
    "Instruments",
    "RankedEvidence",
    "Trail",
    "assemble_response",
]

# A skipped stage (nothing to expand) lost nothing; a timed-out or failed one may have.
_INCOMPLETE = frozenset({StageStatus.TIMED_OUT, StageStatus.FAILED})


@dataclass(frozen=True)
class RankedEvidence:
    """A visible chunk as ranked for the bundle, and what the packer packs: its chunk fields
    are copied from the view, so it is PackableEvidence and comes back on the packed block."""

    view: ChunkView
    candidate: FusedCandidate
    freshness: Freshness
    path: tuple[PathStep, ...] | None = None  # how the graph reached it, when it did
    rank: int = 0  # position in the fused order (the packer presents stale after the rest)
    evidence_id: str = field(init=False, compare=False)
    document_id: str = field(init=False, compare=False)
    document_version: str = field(init=False, compare=False)
    source_uri: str = field(init=False, compare=False)
    text: str = field(init=False, compare=False, repr=False)
    start_char: int = field(init=False, compare=False)
    end_char: int = field(init=False, compare=False)
    claim_id: str | None = field(init=False, compare=False, default=None)
    on_graph_path: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        view = self.view
        for name, value in (
            ("evidence_id", view.chunk_id),
            ("document_id", view.document_id),
            ("document_version", view.document_version),
            ("source_uri", view.source_uri),
            ("text", view.text),
            ("start_char", view.start_char),
            ("end_char", view.end_char),
            ("on_graph_path", self.path is not None),
        ):
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class Trail:
    """What stages leave for the manifest, returned by each and joined in request order."""

    stages: tuple[StageReport, ...] = ()
    denied: tuple[Denial, ...] = ()
    route_reasons: tuple[str, ...] = ()  # added to the route's own reasons
    left_out: frozenset[RetrieverName] = frozenset()  # ran, but did not join the ranking
    dropped_for_freshness: int = 0
    packing_drops: Mapping[str, int] = field(default_factory=dict)
    model_stages: tuple[ModelStageReport, ...] = ()  # the optional LLM stages that ran

    def __add__(self, later: Trail) -> Trail:
        return Trail(
            stages=self.stages + later.stages,
            denied=self.denied + later.denied,
            route_reasons=self.route_reasons + later.route_reasons,
            left_out=self.left_out | later.left_out,
            dropped_for_freshness=self.dropped_for_freshness + later.dropped_for_freshness,
            packing_drops={**self.packing_drops, **later.packing_drops},
            model_stages=self.model_stages + later.model_stages,
        )


@dataclass(frozen=True)
class Instruments:
    """The names of what measured and embedded, as the manifest reports them."""

    token_counter: str
    embedder: str


def assemble_response(
    request: ContextRequest,
    deadline: Deadline,
    scopes: frozenset[str],
    instruments: Instruments,
    route: RouteDecision,
    trail: Trail,
    ending: PackResult[RankedEvidence] | UnanswerableReason,
) -> ContextResponse:
    """The validated response: the packed bundle, or why there is none, and its manifest."""
    route = route.model_copy(
        update={
            "retrievers": [r for r in route.retrievers if r not in trail.left_out],
            "reasons": [*route.reasons, *trail.route_reasons],
        }
    )
    if isinstance(ending, UnanswerableReason):
        return ContextResponse(
            answerable=False,
            reason=ending,
            items=[],
            limits=_limits(request, deadline, 0),
            denied=list(trail.denied),
            trace_id=request.trace_id,
            manifest=_manifest(request, scopes, instruments, route, trail, []),
        )
    audit = build_manifest(ending, include_text_hashes=True)
    log_manifest(audit, trace_id=request.trace_id)
    blocks = [
        ManifestBlock(
            citation_id=b.source_id,
            chunk_id=b.evidence_id,
            document_version=b.document_version,
            tokens=b.tokens,
            truncated=b.truncated,
            content_sha256=b.content_sha256 or "",
        )
        for b in audit.blocks
    ]
    return ContextResponse(
        answerable=True,
        items=[_item(rank, block) for rank, block in enumerate(ending.blocks, start=1)],
        limits=_limits(request, deadline, ending.used_tokens),
        denied=list(trail.denied),
        trace_id=request.trace_id,
        manifest=_manifest(request, scopes, instruments, route, trail, blocks),
    )


def _manifest(
    request: ContextRequest,
    scopes: frozenset[str],
    instruments: Instruments,
    route: RouteDecision,
    trail: Trail,
    blocks: list[ManifestBlock],
) -> Manifest:
    return Manifest(
        namespace=request.namespace,
        prompt_version=PROMPT_VERSION,
        route=route,
        stages=list(trail.stages),
        partial=any(s.status in _INCOMPLETE for s in trail.stages),
        deadline_stage=next(
            (s.stage for s in trail.stages if s.status is StageStatus.TIMED_OUT), None
        ),
        token_counter=instruments.token_counter,
        embedder=instruments.embedder,
        effective_scope_count=len(scopes),
        dropped_for_freshness=trail.dropped_for_freshness,
        packing_drops=dict(trail.packing_drops),
        blocks=blocks,
        model_stages=list(trail.model_stages),
    )


def _limits(request: ContextRequest, deadline: Deadline, used_tokens: int) -> Limits:
    return Limits(
        used_tokens=used_tokens,
        max_tokens=request.max_tokens,
        elapsed_ms=deadline.elapsed_ms(),
        timeout_ms=request.timeout_ms,
    )


def _item(rank: int, block: PackedBlock[RankedEvidence]) -> EvidenceItem:
    ranked = block.evidence
    view, candidate = ranked.view, ranked.candidate
    return EvidenceItem(
        citation_id=block.citation_id,
        rank=rank,
        content=block.content,
        source_uri=view.source_uri,
        document_id=view.document_id,
        chunk_id=view.chunk_id,
        document_version=view.document_version,
        freshness=ranked.freshness,
        provenance_path=_provenance(view, ranked.path),
        retrieval_scores=RetrievalScores(
            vector=candidate.scores.get(RetrieverName.VECTOR),
            fulltext=_reciprocal_rank(candidate, RetrieverName.FULLTEXT),
            graph=candidate.scores.get(RetrieverName.GRAPH),
            fused=candidate.fused,
        ),
        span=Span(start_char=block.start_char, end_char=block.end_char),
        truncated=block.truncated,
        tokens=block.tokens,
        pages=_pages(view, block.start_char, block.end_char),
    )


def _pages(view: ChunkView, start_char: int, end_char: int) -> PageRange | None:
    pages = view.pages(start_char, end_char)
    return None if pages is None else PageRange(first=pages[0], last=pages[1])


def _reciprocal_rank(candidate: FusedCandidate, retriever: RetrieverName) -> float | None:
    """1/rank among the retriever's visible hits. Used for full-text instead of its raw BM25
    score, which depends on index-wide term statistics — counts over documents the caller may
    not see, other projects' included — and so would let a caller probe hidden text."""
    rank = candidate.ranks.get(retriever)
    return None if rank is None else 1.0 / rank


def _provenance(view: ChunkView, path: tuple[PathStep, ...] | None) -> list[ProvenanceStep]:
    """Document -> chunk for search hits; the graph path (anchor ... -> chunk) otherwise."""
    if path:
        return [ProvenanceStep(kind=step.kind, id=step.id, via=step.via) for step in path]
    return [
        ProvenanceStep(kind=NodeKind.DOCUMENT, id=f"{view.document_id}@{view.document_version}"),
        ProvenanceStep(kind=NodeKind.CHUNK, id=view.chunk_id, via="HAS_CHUNK"),
    ]
