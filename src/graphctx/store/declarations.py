"""What one node declaration says about a node, and its identity in the store.

Every :class:`~graphctx.store.records.KnowledgeNode` written is a *declaration*: through its
supporting chunks it introduces the node's name and aliases (as lookup keys) and its type.
A declared key or type is shown to a request only when that declaration is visible to it: at
least one of its chunks is visible and, unless it only mentions the node, none is hidden (the
derived-text rule, per declaration). A hidden declaration never hides a visible one.

Both backends store declarations under :func:`declaration_id`, so writing the same graph again
is idempotent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from graphctx.store.records import MENTIONS, KnowledgeNode
from graphctx.text.names import name_key

__all__ = ["declaration_id", "is_home_declaration", "name_keys"]


def name_keys(node: KnowledgeNode) -> list[str]:
    """The lookup keys the declaration introduces: its name's and aliases', sorted."""
    return sorted({name_key(n) for n in (node.name, *node.aliases)} - {""})


def is_home_declaration(node: KnowledgeNode) -> bool:
    """Whether the chunks state, describe or contain the node (not only mention it)."""
    return node.support_link != MENTIONS


def declaration_id(node: KnowledgeNode, keys: Sequence[str] | None = None) -> str:
    """A digest of what the declaration says (keys, type, link) and through which chunks;
    ``keys`` are its :func:`name_keys` when the caller has them already."""
    said = [
        node.node_id,
        node.support_link,
        node.node_type,
        name_keys(node) if keys is None else list(keys),
        sorted(set(node.supporting_chunk_ids)),
    ]
    return hashlib.sha256(json.dumps(said, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]
