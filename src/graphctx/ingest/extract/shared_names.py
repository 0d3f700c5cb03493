"""Shared names: a capitalised multi-word name used by several documents becomes an Entity.

A bridge question ("the first president of the association that publishes X") needs the
passage about X and a passage that names the same association, although neither is *about*
the other, so no title mention links them. HippoRAG links such passages through the entities
an LLM extracts from both; offline, the closest signal a text already carries is a proper
name written the same way in both ("American Psychological Association", "McDowell County").

Each name (two to five capitalised words, :func:`~graphctx.ingest.extract.terms.capitalised_terms`)
used by at least ``MIN_DOCUMENTS`` documents and at most ``MAX_DOCUMENTS`` becomes an Entity
node with a MENTIONS link from every chunk using it, and no home chunk: it is visible through
any visible mention (which holds the name), and walking it costs what a mention costs
(``ExpansionPolicy.mention_weight``, the node's mass split among its chunks). A name used by
more documents than ``MAX_DOCUMENTS`` ("United States") joins too much to say anything about
a pair. Document titles are left out: title mentions already link them, to the document's
own node. The node id is a digest, never the name (ids appear in provenance paths).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import Final

from graphctx.contract import NodeKind
from graphctx.ingest.extract.port import ExtractionInput
from graphctx.ingest.extract.terms import capitalised_terms
from graphctx.store.records import MENTIONS, KnowledgeNode
from graphctx.text.names import name_key

__all__ = ["MAX_DOCUMENTS", "MIN_DOCUMENTS", "shared_name_nodes"]

MIN_DOCUMENTS: Final = 2  # a name in one document links nothing
MAX_DOCUMENTS: Final = 20  # a name in more documents is too common to link a pair


def _node_id(key: str) -> str:
    return "name:" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def shared_name_nodes(
    documents: Sequence[ExtractionInput],
    titles: Collection[str] = (),
    *,
    min_documents: int = MIN_DOCUMENTS,
    max_documents: int = MAX_DOCUMENTS,
) -> list[KnowledgeNode]:
    """Entity nodes for the names several documents share (``titles``' keys excluded)."""
    excluded = frozenset(name_key(t) for t in titles)
    items = [(chunk_id, "", text) for doc in documents for chunk_id, text in doc.chunks]
    document_of = {chunk_id: doc.document_id for doc in documents for chunk_id, _ in doc.chunks}
    by_key: dict[str, tuple[str, list[str]]] = {}
    for term, chunk_ids in capitalised_terms(items).items():
        key = name_key(term.term)
        if not key or key in excluded:
            continue
        name, chunks = by_key.setdefault(key, (term.term, []))
        chunks.extend(chunk_ids)
    nodes = []
    for key, (name, chunks) in sorted(by_key.items()):
        unique = tuple(dict.fromkeys(chunks))
        spread = len({document_of[c] for c in unique})
        if min_documents <= spread <= max_documents:
            nodes.append(
                KnowledgeNode(
                    _node_id(key),
                    NodeKind.ENTITY,
                    name,
                    unique,
                    node_type="Name",
                    support_link=MENTIONS,
                )
            )
    return nodes
