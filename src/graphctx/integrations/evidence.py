"""What every adapter shares: where evidence comes from, the request it asks, what it hands on.

An adapter holds a :class:`Asking` (principal, scopes, project, mode, budget, deadline) and
an :class:`EvidenceSource`; for each question it asks the source once (:func:`ask`, :func:`aask`:
one :class:`ContextRequest` for a provider, or the question with the settings for a
:class:`~graphctx.client.GraphctxClient`, whose API key decides the principal and scopes the
adapter leaves out) and turns the bundle's items into its framework's documents with
:func:`item_metadata`; a model reads the bundle as
:func:`graphctx.context.compact.compact_bundle_text`, the text MCP's ``retrieve_context`` sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

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

if TYPE_CHECKING:
    from graphctx.client import GraphctxClient

__all__ = [
    "Asking",
    "EvidenceSource",
    "MetadataValue",
    "aask",
    "ask",
    "item_metadata",
    "keyed_client",
    "request_for",
]

MetadataValue = str | int | float | bool | None


@runtime_checkable
class EvidenceSource(Protocol):
    """Anything that answers a ContextRequest: a ContextProvider, a GraphctxClient."""

    def retrieve(self, request: ContextRequest) -> ContextResponse: ...


def keyed_client(source: object) -> GraphctxClient | None:
    """``source`` when it is a :class:`~graphctx.client.GraphctxClient` (its API key decides
    principal and scopes), else None. Without the client extra nothing is one."""
    try:
        from graphctx.client.http import GraphctxClient
    except ImportError:
        return None
    return source if isinstance(source, GraphctxClient) else None


@dataclass(frozen=True)
class Asking:
    """Whom an adapter asks for, and within which limits. ``namespace`` None means the
    source's own (a client's project) or ``"default"``; ``principal_id`` or ``scopes`` None
    (only with a client) mean the client's API key's."""

    principal_id: str | None
    scopes: tuple[str, ...] | None
    namespace: str | None = None
    retrieval_mode: RetrievalMode = RetrievalMode.AUTO
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    freshness_required_at: datetime | None = None

    @classmethod
    def of(
        cls,
        source: EvidenceSource,
        principal_id: str | None,
        scopes: Sequence[str] | None,
        *,
        namespace: str | None = None,
        retrieval_mode: RetrievalMode | str = RetrievalMode.AUTO,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        freshness_required_at: datetime | None = None,
    ) -> Asking:
        """Validated now, so a wrong setting fails when the adapter is built, typed. In
        process there is no key: ``principal_id`` and ``scopes`` are needed."""
        if isinstance(scopes, str):
            raise InvalidRequestError("scopes must be a list of scope names", field="scopes")
        if keyed_client(source) is None:
            for name, value in (("principal_id", principal_id), ("scopes", scopes)):
                if value is None:
                    raise InvalidRequestError(
                        f"{name} is needed in process; only a GraphctxClient takes it from "
                        "its API key",
                        field=name,
                    )
        try:
            mode = RetrievalMode(retrieval_mode)
        except ValueError:
            names = ", ".join(m.value for m in RetrievalMode)
            raise InvalidRequestError(
                f"retrieval_mode must be one of {names}", field="retrieval_mode"
            ) from None
        asking = cls(
            principal_id,
            None if scopes is None else tuple(scopes),
            namespace,
            mode,
            max_tokens,
            timeout_ms,
            freshness_required_at,
        )
        request_for(asking, "settings check")
        return asking


# Stands in for what the key decides when only the settings are checked (never sent).
_SETTINGS_CHECK_NAME = "settings-check"


def request_for(asking: Asking, query: str) -> ContextRequest:
    """The one request an adapter sends for ``query``; InvalidRequestError when it is not valid.
    (An identity left to the key is checked with a stand-in name; :func:`ask` never sends it.)"""
    scopes = asking.scopes if asking.scopes is not None else (_SETTINGS_CHECK_NAME,)
    fields: dict[str, object] = {
        "query": query,
        "principal_id": asking.principal_id or _SETTINGS_CHECK_NAME,
        "allowed_scopes": list(scopes),
        "retrieval_mode": asking.retrieval_mode,
        "max_tokens": asking.max_tokens,
        "timeout_ms": asking.timeout_ms,
    }
    if asking.namespace is not None:
        fields["namespace"] = asking.namespace
    if asking.freshness_required_at is not None:
        fields["freshness_required_at"] = asking.freshness_required_at
    return parse_request(fields)


def ask(source: EvidenceSource, asking: Asking, query: str) -> ContextResponse:
    """The bundle for ``query``: a client is sent the question with the settings (its key
    fills in what ``asking`` leaves out); any other source one full ContextRequest."""
    request = request_for(asking, query)  # validates the question the same way for both
    client = keyed_client(source)
    if client is None:
        return source.retrieve(request)
    return client.retrieve(
        query,
        namespace=asking.namespace,
        principal_id=asking.principal_id,
        scopes=asking.scopes,
        retrieval_mode=asking.retrieval_mode,
        max_tokens=asking.max_tokens,
        timeout_ms=asking.timeout_ms,
        freshness_required_at=asking.freshness_required_at,
    )


async def aask(source: EvidenceSource, asking: Asking, query: str) -> ContextResponse:
    """:func:`ask` off the caller's event loop (both sources block: the provider
    ``graphctx.open`` returns runs its own loop, the client waits on the network)."""
    return await asyncio.to_thread(ask, source, asking, query)


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
