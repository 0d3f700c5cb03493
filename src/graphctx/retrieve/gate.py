"""The output ACL gate: the last check before evidence leaves the store boundary.

One visibility rule for everything shown to a caller (:func:`is_visible`): a chunk is shown
only when its scopes intersect the effective scopes. :func:`recheck_visible` applies it after
re-reading the chunks with those scopes inside the store query; the output gate
(:func:`verify_visible`) and the explorer's surrounding text
(:func:`graphctx.retrieve.surrounding.build_surrounding`) both go through it.

It fails closed: past its deadline it raises StageTimeout (the caller returns no items), and a
store error propagates (nothing unverified is returned).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphctx.retrieve.deadline import within
from graphctx.store.port import GraphStore
from graphctx.store.records import ChunkView

__all__ = ["is_visible", "recheck_visible", "verify_visible"]

log = logging.getLogger("graphctx.gate")


def is_visible(view: ChunkView, scopes: frozenset[str]) -> bool:
    """The visibility rule: the chunk's scopes intersect the effective scopes."""
    return bool(view.scopes & scopes)


async def recheck_visible(
    store: GraphStore,
    namespace: str,
    views: Sequence[ChunkView],
    scopes: frozenset[str],
    deadline_at: float,
) -> list[ChunkView]:
    """The ``views`` that a re-read with the effective scopes confirms, in their order."""
    if not views:
        return []
    rechecked = await within(
        deadline_at,
        store.fetch_chunks(namespace, [v.chunk_id for v in views], scopes, deadline_at),
    )
    confirmed = {v.chunk_id: v for v in rechecked if is_visible(v, scopes)}
    return [
        v
        for v in views
        if v.chunk_id in confirmed
        and confirmed[v.chunk_id].source_uri == v.source_uri
        and is_visible(v, scopes)
    ]


async def verify_visible(
    store: GraphStore,
    namespace: str,
    views: Sequence[ChunkView],
    scopes: frozenset[str],
    deadline_at: float,
    trace_id: str,
) -> tuple[list[ChunkView], int]:
    """Re-read every chunk with the effective scopes; drop (fail closed) what does not match."""
    kept = await recheck_visible(store, namespace, views, scopes, deadline_at)
    dropped = len(views) - len(kept)
    if dropped:
        log.warning(
            "output gate withheld %d item(s) not visible to the effective scopes",
            dropped,
            extra={"trace_id": trace_id, "namespace": namespace},
        )
    return kept, dropped
