"""The graph stage as the pipeline runs it: walk, merge the propagated scores, decide.

Shared by the provider and ``graphctx eval`` so both rank exactly alike. In ``graph`` mode the
merged ranking is used whenever the walk reached anything visible; in ``auto`` the router's
:func:`~graphctx.retrieve.routing.graph_verdict` decides from what the walk found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphctx.contract import RetrievalMode
from graphctx.retrieve.entities import order_matches
from graphctx.retrieve.expansion import SEED_LIMIT, GraphExpansion, expand_graph, policy_for
from graphctx.retrieve.fusion import FusedCandidate, merge_graph
from graphctx.retrieve.question_type import QuestionClass
from graphctx.retrieve.routing import GraphVerdict, graph_verdict
from graphctx.store.port import GraphStore
from graphctx.store.records import EntityMatch

__all__ = ["GraphRanking", "rank_with_graph"]


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
    """Walk from the anchors and named entities; merge; keep the merge when it should join."""
    seeds, namesakes = seeds_by_name(entities)
    graph = await expand_graph(
        store, namespace, fused, seeds, question, scopes, deadline_at, namesakes=namesakes
    )
    if not graph.hits:
        return GraphRanking(
            list(fused), graph, False, "graph expansion found nothing visible: hybrid ranking"
        )
    restart = 1.0 - policy_for(question).hop_decay  # what the walk keeps at each anchor
    merged = merge_graph(fused, graph.scores, restart=dict.fromkeys(graph.anchors, restart))
    if mode is not RetrievalMode.AUTO:
        return GraphRanking(merged, graph, True, "graph mode: propagated scores joined")
    verdict: GraphVerdict = graph_verdict(
        [c.chunk_id for c in fused],
        [c.chunk_id for c in merged],
        graph.supported,
        entities,
        len(graph.anchors),
    )
    return GraphRanking(
        merged if verdict.joins else list(fused), graph, verdict.joins, verdict.reason
    )
