"""Calibrated fusion: each retriever's list weighed by how far it can be trusted for this query.

Reciprocal-rank fusion gives a weak list the same say as a strong one, so a poor embedder
pushes strong full-text hits out of the top of the bundle. Here instead:

1. **Calibration.** Each list's scores become standard scores within that list (how far a
   hit stands out from the rest of the same list), shifted so the list's weakest hit counts
   zero. Scale-free: BM25, Lucene and cosine scores all become "spreads above the tail", and a
   list whose top stands out speaks louder than one whose scores sit in a narrow band.
2. **Trust by agreement.** The lexical list is the reference: its scores come from the
   query's own words being present. Every other list is weighed by how much its top
   ``AGREEMENT_DEPTH`` agrees with the reference's top (shared chunks / depth). An embedder
   that finds what the words find adds confirmation and recall around it; one that returns
   unrelated chunks has almost no vote. When the lexical list is absent (no matching term,
   timed out), the first list present is the reference.
3. **Graph propagation** (:func:`merge_graph`): scores propagated from confident anchors are
   added to each chunk's *relative* fused score (its share of the best one), so a neighbour
   reached from one anchor ranks below that anchor, and only support from several anchors
   (or a named entity) lifts it higher. As in personalized PageRank, an anchor keeps a
   restart share of its own mass (``1 - hop_decay``, what the walk does not pass on):
   without it every anchor counted only its search score while a search hit next to an
   anchor counted its search score *and* the anchor's vote, so neighbours of the top hit
   overtook the other anchors. The propagated score weighs ``GRAPH_WEIGHT`` against the
   relative score (chosen leave-one-set-out, docs/eval/README.md); one anchor's neighbour
   (at most ``hop_decay`` of its mass) stays below that anchor while
   ``GRAPH_WEIGHT * (2 * hop_decay - 1) < 1``.

Deterministic: ties go to the best single rank, then the chunk id. ``Fusion.explain`` is the
line the manifest carries.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphctx.contract import RetrieverName
from graphctx.store.graph_walk import combine_support
from graphctx.store.records import ChunkHit

__all__ = [
    "AGREEMENT_DEPTH",
    "GRAPH_WEIGHT",
    "REFERENCE_ORDER",
    "FusedCandidate",
    "Fusion",
    "ListWeight",
    "fuse_lists",
    "merge_graph",
    "ranked_candidates",
]

AGREEMENT_DEPTH = 10  # top hits of two lists compared to weigh the second by the first
REFERENCE_ORDER = (RetrieverName.FULLTEXT, RetrieverName.VECTOR)  # first present: reference
GRAPH_WEIGHT = 2.0  # propagated graph score's weight against a chunk's relative fused score


@dataclass(frozen=True)
class FusedCandidate:
    chunk_id: str
    fused: float  # the score the bundle is ordered by (before stale demotion)
    scores: Mapping[RetrieverName, float]  # each retriever's own score, when it found the chunk
    ranks: Mapping[RetrieverName, int]  # 1-based rank per retriever


@dataclass(frozen=True)
class ListWeight:
    """One list's say in the fusion, and why."""

    retriever: RetrieverName
    weight: float
    hits: int
    agreement: int | None = None  # shared top hits with the reference; None: the reference


@dataclass(frozen=True)
class Fusion:
    candidates: list[FusedCandidate]
    weights: tuple[ListWeight, ...] = ()

    def explain(self) -> str:
        parts = []
        for w in self.weights:
            if w.agreement is None:
                parts.append(f"{w.retriever.value} {w.weight:.2f} (reference, {w.hits} hits)")
            else:
                parts.append(
                    f"{w.retriever.value} {w.weight:.2f} ({w.agreement}/{AGREEMENT_DEPTH}"
                    " top hits shared with the reference)"
                )
        return "fusion weights: " + ("; ".join(parts) if parts else "no lists")


TAIL = 0.1  # the weakest hit of a list still stands this many spreads above a chunk it missed


def _calibrated(hits: Sequence[ChunkHit]) -> dict[str, float]:
    """Standard scores within the list, shifted so its weakest hit is ``TAIL`` (first hit of
    a repeated chunk counts)."""
    first: dict[str, float] = {}
    for hit in hits:
        first.setdefault(hit.chunk_id, hit.score)
    if not first:
        return {}
    values = list(first.values())
    spread = statistics.pstdev(values) if len(values) > 1 else 0.0
    low = min(values)
    if spread <= 0.0:
        return {cid: 1.0 for cid in first}
    return {cid: TAIL + (score - low) / spread for cid, score in first.items()}


def _ranks(hits: Sequence[ChunkHit]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for position, hit in enumerate(hits, start=1):
        ranks.setdefault(hit.chunk_id, position)
    return ranks


def _top(hits: Sequence[ChunkHit]) -> set[str]:
    return set(list(dict.fromkeys(h.chunk_id for h in hits))[:AGREEMENT_DEPTH])


def fuse_lists(ranked: Mapping[RetrieverName, Sequence[ChunkHit]]) -> Fusion:
    """Calibrated, agreement-weighted sum of the lists (see the module docstring)."""
    present = [r for r in REFERENCE_ORDER if ranked.get(r)] + sorted(
        r for r in ranked if r not in REFERENCE_ORDER and ranked[r]
    )
    if not present:
        return Fusion([])
    reference = present[0]
    reference_top = _top(ranked[reference])
    fused: dict[str, float] = {}
    scores: dict[str, dict[RetrieverName, float]] = {}
    ranks: dict[str, dict[RetrieverName, int]] = {}
    weights: list[ListWeight] = []
    for retriever in present:
        hits = ranked[retriever]
        if retriever is reference:
            weight, agreement = 1.0, None
        else:
            agreement = len(reference_top & _top(hits))
            weight = agreement / AGREEMENT_DEPTH
        weights.append(ListWeight(retriever, weight, len(hits), agreement))
        own_rank = _ranks(hits)
        for hit in hits:
            if hit.chunk_id in scores and retriever in scores[hit.chunk_id]:
                continue
            scores.setdefault(hit.chunk_id, {})[retriever] = hit.score
            ranks.setdefault(hit.chunk_id, {})[retriever] = own_rank[hit.chunk_id]
        for chunk_id, value in _calibrated(hits).items():
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight * value
    return Fusion(_ordered(fused, scores, ranks), tuple(weights))


def _ordered(
    fused: Mapping[str, float],
    scores: Mapping[str, Mapping[RetrieverName, float]],
    ranks: Mapping[str, Mapping[RetrieverName, int]],
) -> list[FusedCandidate]:
    def key(cid: str) -> tuple[float, bool, int, str]:
        searched = [rank for name, rank in ranks[cid].items() if name is not RetrieverName.GRAPH]
        # On a tie, evidence search found outranks a chunk only the graph reached.
        return (-fused[cid], not searched, min(searched or ranks[cid].values()), cid)

    order = sorted(fused, key=key)
    return [FusedCandidate(cid, fused[cid], scores[cid], ranks[cid]) for cid in order]


def relative_scores(candidates: Sequence[FusedCandidate]) -> dict[str, float]:
    """Each candidate's fused score as a share of the best one (the best is 1)."""
    best = max((c.fused for c in candidates), default=0.0)
    if best <= 0.0:
        return {c.chunk_id: 1.0 if i == 0 else 0.0 for i, c in enumerate(candidates)}
    return {c.chunk_id: max(0.0, c.fused / best) for c in candidates}


def merge_graph(
    candidates: Sequence[FusedCandidate],
    propagated: Mapping[str, float],
    *,
    weight: float = GRAPH_WEIGHT,
    restart: Mapping[str, float] | None = None,
) -> list[FusedCandidate]:
    """Search candidates (relative score) plus ``weight`` times each chunk's propagated score.

    Propagated scores are in the anchors' units (an anchor's relative score times the path's
    decay), so one anchor's neighbour lands below that anchor when the anchor keeps its
    restart share (see the module); support from several anchors adds up. A graph-only
    chunk enters with its propagated score alone. ``restart`` gives each anchor the share of
    its relative score the walk keeps at it (combined with what other anchors propagate to it
    as independent support); the chunk's reported graph score stays what the walk propagated
    to it.
    """
    kept = restart or {}
    relative = relative_scores(candidates)
    by_id = {c.chunk_id: c for c in candidates}
    fused: dict[str, float] = {}
    scores: dict[str, dict[RetrieverName, float]] = {}
    ranks: dict[str, dict[RetrieverName, int]] = {}
    graph_order = sorted(propagated, key=lambda cid: (-propagated[cid], cid))
    graph_rank = {cid: rank for rank, cid in enumerate(graph_order, start=1)}
    for chunk_id in dict.fromkeys([*by_id, *graph_order]):
        found = by_id.get(chunk_id)
        scores[chunk_id] = dict(found.scores) if found else {}
        ranks[chunk_id] = dict(found.ranks) if found else {}
        total = relative.get(chunk_id, 0.0)
        if chunk_id in propagated:
            scores[chunk_id][RetrieverName.GRAPH] = propagated[chunk_id]
            ranks[chunk_id][RetrieverName.GRAPH] = graph_rank[chunk_id]
        graph = propagated.get(chunk_id, 0.0)
        if chunk_id in kept:
            graph = combine_support([graph, kept[chunk_id] * relative.get(chunk_id, 0.0)])
        fused[chunk_id] = total + weight * graph
    return _ordered(fused, scores, ranks)


def ranked_candidates(chunk_ids: Sequence[str]) -> list[FusedCandidate]:
    """Candidates in a given order (text2cypher's scoped results): score 1/rank."""
    unique = list(dict.fromkeys(chunk_ids))
    return [FusedCandidate(cid, 1.0 / rank, {}, {}) for rank, cid in enumerate(unique, start=1)]
