"""Reciprocal-rank fusion with deterministic tie-breaks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphctx.contract import RetrieverName
from graphctx.store.records import ChunkHit

RRF_K = 60
# Each retriever's vote in fusion (see the README's design notes for how these were chosen).
RETRIEVER_WEIGHTS: dict[RetrieverName, float] = {
    RetrieverName.FULLTEXT: 1.0,
    RetrieverName.VECTOR: 0.5,
}


@dataclass(frozen=True)
class FusedCandidate:
    chunk_id: str
    fused: float
    scores: Mapping[RetrieverName, float]  # each retriever's own score, when it found the chunk
    ranks: Mapping[RetrieverName, int]  # 1-based rank per retriever


def fuse_rrf(
    ranked: Mapping[RetrieverName, Sequence[ChunkHit]],
    k: int = RRF_K,
    weights: Mapping[RetrieverName, float] | None = None,
) -> list[FusedCandidate]:
    """Sum of weight/(k + rank) over retrievers; ties broken by best single rank, then chunk id."""
    vote = RETRIEVER_WEIGHTS if weights is None else weights
    fused: dict[str, float] = {}
    scores: dict[str, dict[RetrieverName, float]] = {}
    ranks: dict[str, dict[RetrieverName, int]] = {}
    for retriever in sorted(ranked):
        seen: set[str] = set()
        for position, hit in enumerate(ranked[retriever], start=1):
            if hit.chunk_id in seen:
                continue
            seen.add(hit.chunk_id)
            share = vote.get(retriever, 1.0) / (k + position)
            fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + share
            scores.setdefault(hit.chunk_id, {})[retriever] = hit.score
            ranks.setdefault(hit.chunk_id, {})[retriever] = position
    order = sorted(fused, key=lambda cid: (-fused[cid], min(ranks[cid].values()), cid))
    return [FusedCandidate(cid, fused[cid], scores[cid], ranks[cid]) for cid in order]


GRAPH_WEIGHT = 1.0  # the graph list's vote in fusion, relative to one search retriever
PINNED_ANCHORS = 1  # top anchors that graph neighbours can never outrank


def fuse_with_graph(
    ranked: Mapping[RetrieverName, Sequence[ChunkHit]],
    graph_hits: Sequence[ChunkHit],
    anchors: Sequence[str] = (),
    *,
    weight: float = GRAPH_WEIGHT,
    pinned: int = PINNED_ANCHORS,
    by_score: bool = True,
    k: int = RRF_K,
) -> list[FusedCandidate]:
    """Search hits fused by RRF, then the graph's hits as a weighted extra vote.

    The best ``pinned`` anchors the graph expanded from keep their places at the top (a
    neighbour never outranks the evidence it was reached from); every other candidate
    competes on its RRF score plus ``weight * graph score / (k + graph rank)``: a chunk of an
    entity the question names (graph score 1) gets a full vote, a neighbour one hop from a
    weaker anchor a fraction of one. Graph ranks follow the graph score, ties going to the
    candidate search ranked higher.
    """
    base = fuse_rrf(ranked, k)
    by_id = {c.chunk_id: c for c in base}
    graph_score: dict[str, float] = {}
    for hit in graph_hits:
        graph_score.setdefault(hit.chunk_id, hit.score)
    order = sorted(
        graph_score,
        key=lambda cid: (-graph_score[cid], -(by_id[cid].fused if cid in by_id else 0.0), cid),
    )
    graph_rank = {cid: rank for rank, cid in enumerate(order, start=1)}
    pinned_first = [c for c in base if c.chunk_id in set(anchors)][:pinned]
    pinned_ids = {c.chunk_id for c in pinned_first}
    fused: list[FusedCandidate] = []
    for cid in dict.fromkeys([*(c.chunk_id for c in base), *order]):
        if cid in pinned_ids:
            continue
        found = by_id.get(cid)
        scores = dict(found.scores) if found else {}
        ranks = dict(found.ranks) if found else {}
        total = found.fused if found else 0.0
        if cid in graph_rank:
            scores[RetrieverName.GRAPH] = graph_score[cid]
            ranks[RetrieverName.GRAPH] = graph_rank[cid]
            strength = min(1.0, graph_score[cid]) if by_score else 1.0
            total += weight * strength / (k + graph_rank[cid])
        fused.append(FusedCandidate(cid, total, scores, ranks))
    fused.sort(key=lambda c: (-c.fused, min(c.ranks.values()), c.chunk_id))
    graph_pinned = [
        FusedCandidate(
            c.chunk_id,
            c.fused,
            {**c.scores, RetrieverName.GRAPH: graph_score[c.chunk_id]}
            if c.chunk_id in graph_score
            else c.scores,
            c.ranks,
        )
        for c in pinned_first
    ]
    return [*graph_pinned, *fused]
