"""Reciprocal-rank fusion with deterministic tie-breaks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphctx.contract import RetrieverName
from graphctx.store.records import ChunkHit

RRF_K = 60


@dataclass(frozen=True)
class FusedCandidate:
    chunk_id: str
    fused: float
    scores: Mapping[RetrieverName, float]  # each retriever's own score, when it found the chunk
    ranks: Mapping[RetrieverName, int]  # 1-based rank per retriever


def fuse_rrf(
    ranked: Mapping[RetrieverName, Sequence[ChunkHit]], k: int = RRF_K
) -> list[FusedCandidate]:
    """Sum of 1/(k + rank) over retrievers; ties broken by best single rank, then chunk id."""
    fused: dict[str, float] = {}
    scores: dict[str, dict[RetrieverName, float]] = {}
    ranks: dict[str, dict[RetrieverName, int]] = {}
    for retriever in sorted(ranked):
        seen: set[str] = set()
        for position, hit in enumerate(ranked[retriever], start=1):
            if hit.chunk_id in seen:
                continue
            seen.add(hit.chunk_id)
            fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + 1.0 / (k + position)
            scores.setdefault(hit.chunk_id, {})[retriever] = hit.score
            ranks.setdefault(hit.chunk_id, {})[retriever] = position
    order = sorted(fused, key=lambda cid: (-fused[cid], min(ranks[cid].values()), cid))
    return [FusedCandidate(cid, fused[cid], scores[cid], ranks[cid]) for cid in order]
