"""The graph stage as the pipeline runs it: walk, merge the propagated scores, decide.

Shared by the provider and ``graphctx eval`` so both rank exactly alike. In ``graph`` mode the
merged ranking is used whenever the walk reached anything visible; in ``auto`` the router's
:func:`~graphctx.retrieve.routing.graph_verdict` decides from what the walk found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from graphctx.contract import RetrievalMode
from graphctx.retrieve.entities import order_matches
from graphctx.retrieve.expansion import (
    SEED_LIMIT,
    GraphExpansion,
    expand_graph,
    policy_for,
    walk_anchors,
)
from graphctx.retrieve.fusion import FusedCandidate, merge_graph
from graphctx.retrieve.question_type import QuestionClass
from graphctx.retrieve.routing import GraphVerdict, graph_verdict
from graphctx.store.port import GraphStore
from graphctx.store.records import ChunkHit, EntityMatch, PathStep

__all__ = ["PROPAGATION_ROUNDS", "GraphRanking", "chained", "rank_with_graph"]

PROPAGATION_ROUNDS: Final = 2  # walks at most, each from new anchors of the last merge


@dataclass(frozen=True)
class GraphRanking:
    candidates: list[FusedCandidate]  # the ranking to use: merged, or the hybrid one kept
    expansion: GraphExpansion
    joined: bool
    reason: str


def seeds_by_name(
    entities: Sequence[EntityMatch],
) -> tuple[list[str], list[tuple[str, ...]]]:
    """The nodes to walk from, and the groups of them one query name resolves to.

    Names are taken in :func:`order_matches` order, each with every node it matches (so a
    name's mass can be split among all its referents), up to ``SEED_LIMIT`` names. A name
    inside a longer name the query also matched is part of that name, not a mention of its
    own ("Virginia" in "Johnnycake, West Virginia"): the longest match wins, as in entity
    linking.
    """
    keys = {m.key for m in entities}
    by_key: dict[str, list[str]] = {}
    for match in order_matches(entities):
        if any(_inside(match.key, other) for other in keys):
            continue
        if match.key in by_key or len(by_key) < SEED_LIMIT:
            by_key.setdefault(match.key, []).append(match.node_id)
    seeds = list(dict.fromkeys(n for nodes in by_key.values() for n in nodes))
    return seeds, [tuple(nodes) for nodes in by_key.values() if len(set(nodes)) > 1]


def _inside(key: str, other: str) -> bool:
    """``key``'s words are a contiguous run of the longer ``other``'s words."""
    return len(other) > len(key) and f" {key} " in f" {other} "


async def rank_with_graph(
    store: GraphStore,
    namespace: str,
    fused: Sequence[FusedCandidate],
    entities: Sequence[EntityMatch],
    question: QuestionClass,
    scopes: frozenset[str],
    deadline_at: float,
    mode: RetrievalMode,
) -> GraphRanking:
    """Walk from the anchors and named entities; merge; keep the merge when it should join.

    The walk is repeated up to ``PROPAGATION_ROUNDS`` times, each from the anchors of the
    ranking the previous walk merged (one more power-iteration step of personalized PageRank,
    whose one-step truncation the first walk is): a bridge document the first walk lifted
    into the top becomes an anchor of the second, so the passage joined to it, not to the
    question, is reached too. A round whose anchors were all walked from already is not
    taken: it would add the same propagation to a ranking that holds it (how much the graph
    weighs is ``GRAPH_WEIGHT``'s one decision, not a count of repeats). A round that finds
    nothing visible, runs out of time, or (in ``auto``) would not join keeps the ranking of
    the round before.
    """
    seeds, namesakes = seeds_by_name(entities)
    restart = 1.0 - policy_for(question).hop_decay  # what the walk keeps at each anchor
    current = list(fused)
    walks: list[GraphExpansion] = []
    reason = "graph expansion found nothing visible: hybrid ranking"
    for _ in range(PROPAGATION_ROUNDS):
        if walks and set(walk_anchors(current, seeds, question)) <= set(walks[-1].anchors):
            break
        graph = await expand_graph(
            store, namespace, current, seeds, question, scopes, deadline_at, namesakes=namesakes
        )
        if not graph.hits:
            if not walks:
                return GraphRanking(current, graph, False, reason)
            break
        merged = merge_graph(current, graph.scores, restart=dict.fromkeys(graph.anchors, restart))
        if mode is not RetrievalMode.AUTO:
            reason = "graph mode: propagated scores joined"
        else:
            verdict: GraphVerdict = graph_verdict(
                [c.chunk_id for c in current],
                [c.chunk_id for c in merged],
                graph.supported,
                entities,
                len(graph.anchors),
            )
            if not verdict.joins:
                if not walks:
                    return GraphRanking(current, graph, False, verdict.reason)
                break
            reason = verdict.reason
        walks.append(graph)
        current = merged
    if len(walks) > 1:
        reason += f" ({len(walks)} walks, each from the anchors of the last merge)"
    return GraphRanking(current, chained(walks), True, reason)


def chained(walks: Sequence[GraphExpansion]) -> GraphExpansion:
    """The walks of the rounds as one expansion: every chunk reached with its first path
    and its best propagated score, every anchor, the withheld counts summed, one report."""
    first = walks[0]
    if len(walks) == 1:
        return first
    scores: dict[str, float] = {}
    paths: dict[str, tuple[PathStep, ...]] = {}
    hops: dict[str, int] = {}
    supported: dict[str, int] = {}
    for walk in walks:
        for hit in walk.hits:
            scores[hit.chunk_id] = max(scores.get(hit.chunk_id, 0.0), hit.score)
        for cid, path in walk.paths.items():
            paths.setdefault(cid, path)
            hops.setdefault(cid, walk.hops.get(cid, 0))
        for cid, count in walk.supported.items():
            supported[cid] = max(supported.get(cid, 0), count)
    hits = [ChunkHit(cid, score) for cid, score in scores.items()]
    hits.sort(key=lambda h: (-h.score, h.chunk_id))
    details = "; ".join(
        f"walk {i}: {w.report.detail or w.report.status.value}"
        for i, w in enumerate(walks, start=1)
    )
    report = first.report.model_copy(
        update={
            "elapsed_ms": sum(w.report.elapsed_ms for w in walks),
            "candidates": len(hits),
            "detail": details,
        }
    )
    return GraphExpansion(
        hits=hits,
        paths=paths,
        withheld=sum(w.withheld for w in walks),
        report=report,
        hops=hops,
        anchors=tuple(dict.fromkeys(a for w in walks for a in w.anchors)),
        supported=supported,
    )
