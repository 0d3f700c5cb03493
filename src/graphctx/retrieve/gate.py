"""The output ACL gate: the last check before evidence leaves the store boundary.

It fails closed: past its deadline it raises StageTimeout (the caller returns no items), and a
store error propagates (nothing unverified is returned).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphctx.retrieve.deadline import within
from graphctx.store.port import GraphStore
from graphctx.store.records import ChunkView

log = logging.getLogger("graphctx.gate")


async def verify_visible(
    store: GraphStore,
    namespace: str,
    views: Sequence[ChunkView],
    scopes: frozenset[str],
    deadline_at: float,
    trace_id: str,
) -> tuple[list[ChunkView], int]:
    """Re-read every chunk with the effective scopes; drop (fail closed) what does not match."""
    if not views:
        return [], 0
    rechecked = await within(
        deadline_at,
        store.fetch_chunks(namespace, [v.chunk_id for v in views], scopes, deadline_at),
    )
    confirmed = {v.chunk_id: v for v in rechecked if v.scopes & scopes}
    kept = [
        v
        for v in views
        if v.chunk_id in confirmed
        and confirmed[v.chunk_id].source_uri == v.source_uri
        and bool(v.scopes & scopes)
    ]
    dropped = len(views) - len(kept)
    if dropped:
        log.warning(
            "output gate withheld %d item(s) not visible to the effective scopes",
            dropped,
            extra={"trace_id": trace_id, "namespace": namespace},
        )
    return kept, dropped
