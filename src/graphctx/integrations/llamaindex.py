"""graphctx for LlamaIndex: a ``BaseRetriever`` of evidence ``NodeWithScore``\\ s.

::

    from graphctx.integrations.llamaindex import GraphctxRetriever
    retriever = GraphctxRetriever(graphctx.open("company.graphctx"),
                                  principal_id="sam", scopes=["eng"], namespace="acme")
    nodes = retriever.retrieve("How do I restart the payment gateway?")

Each node is one bundle item, in bundle order: a ``TextNode`` with the item's exact text, its
chunk id, ``start_char_idx``/``end_char_idx`` set to its span, its document as the SOURCE
relationship, and the flat metadata of
:func:`~graphctx.integrations.evidence.item_metadata` (citation id, source, freshness, scores,
rank). A node's ``score`` is ``1 / rank``, so a postprocessor that sorts by score keeps the
order graphctx packed; the retrievers' own scores are in the metadata. The model reads only
the citation id, source and freshness next to the text. A refused request raises the typed
:class:`~graphctx.errors.GraphctxError`. With a :class:`~graphctx.client.GraphctxClient` as
the source, ``principal_id`` and ``scopes`` may be left out: the client's API key decides them
(in process they are needed).
Needs ``pip install 'graphctx[llamaindex]'``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from graphctx.extras import require_extra

require_extra("llamaindex")

from llama_index.core.retrievers import BaseRetriever  # noqa: E402  (after the extra check)
from llama_index.core.schema import (  # noqa: E402
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)

from graphctx.contract import (  # noqa: E402
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_MS,
    ContextResponse,
    RetrievalMode,
)
from graphctx.integrations.evidence import (  # noqa: E402
    Asking,
    EvidenceSource,
    aask,
    ask,
    item_metadata,
)

__all__ = ["GraphctxRetriever", "nodes_of"]

MODEL_VISIBLE_METADATA: Final = frozenset({"citation_id", "source_uri", "freshness"})


def nodes_of(response: ContextResponse) -> list[NodeWithScore]:
    """One scored ``TextNode`` per item, in bundle order."""
    nodes: list[NodeWithScore] = []
    for rank, item in enumerate(response.items, start=1):
        metadata = item_metadata(item, rank)
        hidden = sorted(set(metadata) - MODEL_VISIBLE_METADATA)
        node = TextNode(
            id_=item.chunk_id,
            text=item.content,
            metadata=metadata,
            start_char_idx=item.span.start_char,
            end_char_idx=item.span.end_char,
            excluded_llm_metadata_keys=hidden,
            excluded_embed_metadata_keys=sorted(metadata),
            relationships={
                NodeRelationship.SOURCE: RelatedNodeInfo(
                    node_id=item.document_id, metadata={"source_uri": item.source_uri}
                )
            },
        )
        nodes.append(NodeWithScore(node=node, score=1.0 / rank))
    return nodes


class GraphctxRetriever(BaseRetriever):
    """A LlamaIndex retriever over a graphctx provider (in-process) or client (remote)."""

    def __init__(
        self,
        source: EvidenceSource,
        *,
        principal_id: str | None = None,
        scopes: Sequence[str] | None = None,
        namespace: str | None = None,
        retrieval_mode: RetrievalMode | str = RetrievalMode.AUTO,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        freshness_required_at: datetime | None = None,
    ) -> None:
        self.asking = Asking.of(
            source,
            principal_id,
            scopes,
            namespace=namespace,
            retrieval_mode=retrieval_mode,
            max_tokens=max_tokens,
            timeout_ms=timeout_ms,
            freshness_required_at=freshness_required_at,
        )
        self.source = source
        super().__init__()

    def bundle(self, query: str) -> ContextResponse:
        """The whole evidence bundle for ``query`` (limits, denials, manifest included)."""
        return ask(self.source, self.asking, query)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return nodes_of(self.bundle(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return nodes_of(await aask(self.source, self.asking, query_bundle.query_str))
