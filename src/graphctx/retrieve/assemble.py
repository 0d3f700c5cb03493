"""Assembling the evidence bundle: ranked evidence, stale after current, and the final response.

The provider orchestrates; this module turns what the stages produced into a validated
ContextResponse (items with provenance, limits, denials, manifest).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from graphctx.provider import ContextProvider

# A skipped stage (nothing to expand) lost nothing; a timed-out or failed one may have.
_INCOMPLETE = frozenset({StageStatus.TIMED_OUT, StageStatus.FAILED})


@dataclass(frozen=True)
class RankedEvidence:
    view: ChunkView
    candidate: FusedCandidate
    freshness: Freshness
    path: tuple[PathStep, ...] | None = None  # how the graph reached it, when it did


def demote_stale(ranked: list[RankedEvidence]) -> list[RankedEvidence]:
    """Every stale item after every item that is not stale, as the README promises; each group
    keeps its fused order. A stale item thus also follows its (current) successor."""
    current = [r for r in ranked if r.freshness is not Freshness.STALE]
    return current + [r for r in ranked if r.freshness is Freshness.STALE]


class ResponseBuilder:
    """Collects stage reports and denials; assembles the final, validated response."""

    def __init__(
        self,
        provider: ContextProvider,
        request: ContextRequest,
        deadline: Deadline,
        route: RouteDecision,
        scopes: frozenset[str],
    ) -> None:
        self.provider = provider
        self.request = request
        self.deadline = deadline
        self.route = route
        self.scopes = scopes
        self.stages: list[StageReport] = []
        self.denied: list[Denial] = []
        self.dropped_for_freshness = 0
        self.packing_drops: dict[str, int] = {}
        self.graph_paths: dict[str, tuple[PathStep, ...]] = {}
        self.blocks: list[ManifestBlock] = []

    def add_route_reason(self, reason: str) -> None:
        self.route = self.route.model_copy(update={"reasons": [*self.route.reasons, reason]})

    def leave_out(self, retriever: RetrieverName) -> None:
        """The route ran ``retriever`` but its results did not join the ranking."""
        kept = [r for r in self.route.retrievers if r is not retriever]
        self.route = self.route.model_copy(update={"retrievers": kept})

    def stage(
        self,
        name: str,
        status: StageStatus,
        started: float,
        count: int = 0,
        detail: str | None = None,
    ) -> None:
        elapsed = int((time.monotonic() - started) * 1000)
        self.stages.append(
            StageReport(
                stage=name, status=status, elapsed_ms=elapsed, candidates=count, detail=detail
            )
        )

    def _manifest(self) -> Manifest:
        return Manifest(
            namespace=self.request.namespace,
            prompt_version=PROMPT_VERSION,
            route=self.route,
            stages=self.stages,
            partial=any(s.status in _INCOMPLETE for s in self.stages),
            deadline_stage=next(
                (s.stage for s in self.stages if s.status is StageStatus.TIMED_OUT), None
            ),
            token_counter=self.provider.token_counter.name,
            embedder=self.provider.embedder.name,
            effective_scope_count=len(self.scopes),
            dropped_for_freshness=self.dropped_for_freshness,
            packing_drops=self.packing_drops,
            blocks=self.blocks,
        )

    def _limits(self, used_tokens: int) -> Limits:
        return Limits(
            used_tokens=used_tokens,
            max_tokens=self.request.max_tokens,
            elapsed_ms=self.deadline.elapsed_ms(),
            timeout_ms=self.request.timeout_ms,
        )

    def unanswerable(self, reason: UnanswerableReason) -> ContextResponse:
        return ContextResponse(
            answerable=False,
            reason=reason,
            items=[],
            limits=self._limits(0),
            denied=self.denied,
            trace_id=self.request.trace_id,
            manifest=self._manifest(),
        )

    def answer(self, packed: PackResult, by_id: dict[str, RankedEvidence]) -> ContextResponse:
        items = [_item(block, by_id[block.evidence.evidence_id]) for block in packed.blocks]
        audit = build_manifest(packed, include_text_hashes=True)
        log_manifest(audit, trace_id=self.request.trace_id)
        self.blocks = [
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
            items=items,
            limits=self._limits(packed.used_tokens),
            denied=self.denied,
            trace_id=self.request.trace_id,
            manifest=self._manifest(),
        )


def _item(block: PackedBlock, ranked: RankedEvidence) -> EvidenceItem:
    view, candidate = ranked.view, ranked.candidate
    return EvidenceItem(
        citation_id=block.citation_id,
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
