"""What every adapter shares: where evidence comes from, the request it asks, what it hands on.

An adapter holds a :class:`Asking` (principal, scopes, project, mode, budget, deadline) and
an :class:`EvidenceSource`; for each question it builds one :class:`ContextRequest` from them
(:func:`request_for`) and turns the bundle's items into its framework's documents with
:func:`item_metadata`; a model reads the bundle as
:func:`graphctx.context.compact.compact_bundle_text`, the text MCP's ``retrieve_context`` sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from graphctx.contract import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_MS,
    ContextRequest,
    ContextResponse,
    EvidenceItem,
    RetrievalMode,
)
from graphctx.contract.parsing import parse_request
from graphctx.errors import InvalidRequestError

__all__ = [
    "Asking",
    "EvidenceSource",
    "MetadataValue",
    "aretrieve",
    "item_metadata",
    "request_for",
]

MetadataValue = str | int | float | bool | None


@runtime_checkable
class EvidenceSource(Protocol):
    """Anything that answers a ContextRequest: a ContextProvider, a GraphctxClient."""

    def retrieve(self, request: ContextRequest) -> ContextResponse: ...


@dataclass(frozen=True)
class Asking:
    """Whom an adapter asks for, and within which limits. ``namespace`` None means the
    source's own (a client's project) or ``"default"``."""

    principal_id: str
    scopes: tuple[str, ...]
    namespace: str | None = None
    retrieval_mode: RetrievalMode = RetrievalMode.AUTO
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    freshness_required_at: datetime | None = None

    @classmethod
    def of(
        cls,
        principal_id: str,
        scopes: Sequence[str],
        *,
        namespace: str | None = None,
        retrieval_mode: RetrievalMode | str = RetrievalMode.AUTO,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        freshness_required_at: datetime | None = None,
    ) -> Asking:
        """Validated now, so a wrong setting fails when the adapter is built, typed."""
        if isinstance(scopes, str):
            raise InvalidRequestError("scopes must be a list of scope names", field="scopes")
        try:
            mode = RetrievalMode(retrieval_mode)
        except ValueError:
            names = ", ".join(m.value for m in RetrievalMode)
            raise InvalidRequestError(
                f"retrieval_mode must be one of {names}", field="retrieval_mode"
            ) from None
        asking = cls(
            principal_id,
            tuple(scopes),
            namespace,
            mode,
            max_tokens,
            timeout_ms,
            freshness_required_at,
        )
        request_for(asking, "settings check")
        return asking


def request_for(asking: Asking, query: str) -> ContextRequest:
    """The one request an adapter sends for ``query``; InvalidRequestError when it is not valid."""
    fields: dict[str, object] = {
        "query": query,
        "principal_id": asking.principal_id,
        "allowed_scopes": list(asking.scopes),
        "retrieval_mode": asking.retrieval_mode,
        "max_tokens": asking.max_tokens,
        "timeout_ms": asking.timeout_ms,
    }
    if asking.namespace is not None:
        fields["namespace"] = asking.namespace
    if asking.freshness_required_at is not None:
        fields["freshness_required_at"] = asking.freshness_required_at
    return parse_request(fields)


async def aretrieve(source: EvidenceSource, request: ContextRequest) -> ContextResponse:
    """``source.retrieve`` off the caller's event loop (both sources block: the provider
    ``graphctx.open`` returns runs its own loop, the client waits on the network)."""
    return await asyncio.to_thread(source.retrieve, request)


def item_metadata(item: EvidenceItem, rank: int) -> dict[str, MetadataValue]:
    """An item's citation, source, span, freshness, scores and rank as flat metadata.

    Flat scalars only: every framework stores, filters and serializes them as they are.
    ``rank`` is the item's 1-based place in the bundle (the order graphctx packed it in).
    """
    scores = item.retrieval_scores
    return {
        "citation_id": item.citation_id,
        "source_uri": item.source_uri,
        "document_id": item.document_id,
        "document_version": item.document_version,
        "chunk_id": item.chunk_id,
        "claim_id": item.claim_id,
        "start_char": item.span.start_char,
        "end_char": item.span.end_char,
        "first_page": None if item.pages is None else item.pages.first,
        "last_page": None if item.pages is None else item.pages.last,
        "freshness": item.freshness.value,
        "truncated": item.truncated,
        "tokens": item.tokens,
        "rank": rank,
        "score_fused": scores.fused,
        "score_vector": scores.vector,
        "score_fulltext": scores.fulltext,
        "score_graph": scores.graph,
    }
