"""Server-side citation resolution: prompt-local ids back to evidence, from the source map only.

The model picks ids; URL, document, version and span come from the ``SourceRef`` the server
built when it packed the context, never from the model's text. Unknown ids are an error, not
something to drop quietly: a fluent answer whose evidence vanished misleads the reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graphctx.context.answer import AnswerContractError, AnswerPayload
from graphctx.context.evidence import SourceRef
from graphctx.contract import ContextResponse

__all__ = ["ResolvedCitation", "resolve_citations", "source_map_of"]


@dataclass(frozen=True)
class ResolvedCitation:
    source_id: str
    evidence_id: str
    document_id: str
    document_version: str
    source_uri: str
    start_char: int
    end_char: int
    truncated: bool
    claim: str


def resolve_citations(
    payload: AnswerPayload, source_map: Mapping[str, SourceRef]
) -> tuple[ResolvedCitation, ...]:
    """Check the answer against the source map and resolve every citation; raise on any breach."""
    requested = [citation.source_id for citation in payload.citations]
    unknown = tuple(sorted(set(requested) - set(source_map), key=lambda s: (len(s), s)))
    if unknown:
        raise AnswerContractError(
            f"answer cites unknown source ids: {', '.join(unknown)}",
            code="unknown_citation_ids",
            unknown_ids=unknown,
        )
    if payload.status == "answered" and not payload.citations:
        raise AnswerContractError(
            "an answered reply must cite at least one source", code="answered_without_citations"
        )
    if payload.status == "insufficient_evidence" and payload.citations:
        raise AnswerContractError(
            "an insufficient_evidence reply must not cite sources",
            code="insufficient_with_citations",
        )
    resolved: list[ResolvedCitation] = []
    for citation in payload.citations:
        ref = source_map[citation.source_id]
        resolved.append(
            ResolvedCitation(
                source_id=ref.citation_id,
                evidence_id=ref.evidence_id,
                document_id=ref.document_id,
                document_version=ref.document_version,
                source_uri=ref.source_uri,
                start_char=ref.start_char,
                end_char=ref.end_char,
                truncated=ref.truncated,
                claim=citation.claim,
            )
        )
    return tuple(resolved)


def source_map_of(response: ContextResponse) -> dict[str, SourceRef]:
    """The source map of a returned bundle, for callers that hold only the response.

    An agent behind HTTP or MCP never sees the packer's map; this rebuilds it from the
    items, which carry the same ids, spans and versions, so ``resolve_citations`` accepts
    exactly the bundle's citation ids and nothing a document's text claims.
    """
    return {
        item.citation_id: SourceRef(
            citation_id=item.citation_id,
            evidence_id=item.chunk_id,
            document_id=item.document_id,
            document_version=item.document_version,
            source_uri=item.source_uri,
            start_char=item.span.start_char,
            end_char=item.span.end_char,
            truncated=item.truncated,
            freshness=item.freshness,
            claim_id=item.claim_id,
        )
        for item in response.items
    }
