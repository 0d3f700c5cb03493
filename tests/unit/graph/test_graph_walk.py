"""The shared graph walk, answered by an in-memory graph (no store, no I/O)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest

from graphctx.contract import NodeKind
from graphctx.store import graph_walk as walk
from graphctx.store.port import StageTimeout
from graphctx.store.records import MENTIONS, SUPPORTS, ExpansionPolicy, PathStep

FAR_FUTURE_S = 60.0


@dataclass
class FakeGraph:
    """Chunks (id -> visible), support links and relations; every node is an Entity."""

    chunks: dict[str, bool]
    supports: list[tuple[str, str, str]]  # (node, chunk, link)
    relations: list[tuple[str, str, str]] = field(default_factory=list)  # (source, type, target)
    asked: list[walk.Query] = field(default_factory=list)

    def row(self, chunk_id: str) -> int:
        return list(self.chunks).index(chunk_id)

    def node_visible(self, node: str) -> bool:
        """Through a visible home chunk; a node known only from mentions, a visible mention."""
        links = [(self.chunks[c], link) for n, c, link in self.supports if n == node]
        if any(link != MENTIONS for _, link in links):
            return any(seen for seen, link in links if link != MENTIONS)
        return any(seen for seen, _ in links)

    def degree(self, node: str) -> int:
        return sum(n == node for n, _, _ in self.supports)

    def __call__(self, query: walk.Query) -> None:
        self.asked.append(query)
        match query:
            case walk.VisibleChunks(ids):
                query.rows = [
                    walk.AnchorChunk(self.row(c), c, f"doc-{c}") for c in ids if self.chunks[c]
                ]
            case walk.NodesOfChunks(rows):
                query.rows = [
                    walk.ChunkNode(
                        self.row(c),
                        n,
                        link,
                        None,
                        NodeKind.ENTITY,
                        self.degree(n),
                        self.node_visible(n),
                    )
                    for n, c, link in self.supports
                    if self.row(c) in rows
                ]
            case walk.Relations(ids, incoming):
                query.rows = [
                    walk.RelationEdge(
                        i, near, far, rtype, NodeKind.ENTITY, self.node_visible(far), 1
                    )
                    for i, (source, rtype, target) in enumerate(self.relations)
                    for near, far in [(target, source) if incoming else (source, target)]
                    if near in ids
                ]
            case walk.ChunksOfNodes(ids):
                query.rows = [
                    walk.NodeChunk(n, self.row(c), c, f"doc-{c}", link, None, self.chunks[c])
                    for n in ids
                    for node, c, link in sorted(self.supports, key=lambda s: s[2] == MENTIONS)
                    if node == n
                ]
            case walk.VisibleNodes() | walk.StatingChunks():
                raise AssertionError("not used by these tests")


def deadline() -> float:
    return time.monotonic() + FAR_FUTURE_S


def test_an_empty_expansion_asks_the_store_nothing() -> None:
    graph = FakeGraph({"a": True}, [])
    result = walk.run(walk.expand({}, ExpansionPolicy(), deadline()), graph)
    assert (result.expansions, graph.asked) == ((), [])


def test_a_walk_past_its_deadline_raises_before_its_first_query() -> None:
    graph = FakeGraph({"a": True}, [])
    with pytest.raises(StageTimeout):
        walk.run(walk.expand({"a": 1.0}, ExpansionPolicy(), time.monotonic() - 1), graph)
    assert graph.asked == []


def test_a_shared_node_reaches_home_chunks_before_mentions_and_counts_hidden_ones() -> None:
    graph = FakeGraph(
        {"a": True, "b": True, "m": True, "secret": False},
        [
            ("n", "a", SUPPORTS),
            ("n", "m", MENTIONS),
            ("n", "b", SUPPORTS),
            ("n", "secret", SUPPORTS),
        ],
    )
    policy = ExpansionPolicy(hop_decay=0.5, degree_exponent=0.0)
    result = walk.run(walk.expand({"a": 1.0}, policy, deadline()), graph)
    assert [(e.chunk_id, e.hops, e.score) for e in result.expansions] == [
        ("b", 1, 0.5),
        ("m", 1, 0.25),
    ]
    assert result.expansions[0].path == (
        PathStep(NodeKind.CHUNK, "a"),
        PathStep(NodeKind.ENTITY, "n", SUPPORTS),
        PathStep(NodeKind.CHUNK, "b", "<-SUPPORTS"),
    )
    assert (result.withheld, result.nodes_visited) == (1, 1)


def test_a_visible_mention_of_a_node_whose_home_is_hidden_is_withheld_not_walked() -> None:
    graph = FakeGraph(
        {"a": True, "b": True, "memo": False},
        [("doc:memo", "memo", SUPPORTS), ("doc:memo", "a", MENTIONS), ("doc:memo", "b", MENTIONS)],
    )
    result = walk.run(walk.expand({"a": 1.0}, ExpansionPolicy(), deadline()), graph)
    assert (result.expansions, result.withheld, result.nodes_visited) == ((), 1, 0)


def test_a_hub_node_is_never_traversed() -> None:
    chunks = {f"c{i}": True for i in range(4)}
    graph = FakeGraph(chunks, [("hub", c, SUPPORTS) for c in chunks])
    policy = ExpansionPolicy(max_node_support=3)
    result = walk.run(walk.expand({"c0": 1.0}, policy, deadline()), graph)
    assert (result.expansions, result.nodes_visited) == ((), 0)


def test_relations_are_walked_both_ways_and_a_hidden_far_end_is_withheld() -> None:
    graph = FakeGraph(
        {"pay": True, "db": True, "shop": True, "vault": False},
        [(n, n, SUPPORTS) for n in ("pay", "db", "shop", "vault")],
        [("pay", "DEPENDS_ON", "db"), ("shop", "DEPENDS_ON", "pay"), ("pay", "READS", "vault")],
    )
    result = walk.run(walk.expand({"pay": 1.0}, ExpansionPolicy(), deadline()), graph)
    relation_queries = [
        (q.node_ids, q.incoming) for q in graph.asked if isinstance(q, walk.Relations)
    ]
    assert relation_queries == [(("pay",), False), (("pay",), True)]
    assert {e.chunk_id: e.path[2].via for e in result.expansions} == {
        "db": "DEPENDS_ON",
        "shop": "<-DEPENDS_ON",
    }
    assert result.withheld == 1


def test_an_anchor_cited_by_another_anchor_is_confirmed_by_it() -> None:
    # 근로기준법 lsa-08: 제53조 (an anchor) cites 제50조 (another anchor) and 제51조; the
    # citation between the two anchors counts for 제50조 as the one to 제51조 does for it.
    graph = FakeGraph(
        {"a50": True, "a53": True, "a51": True},
        [(n, n, SUPPORTS) for n in ("a50", "a53", "a51")],
        [("a53", "REFERENCES", "a50"), ("a53", "REFERENCES", "a51")],
    )
    policy = ExpansionPolicy(hop_decay=0.5, reverse_weight=0.5)
    result = walk.run(walk.expand({"a53": 1.0, "a50": 0.8}, policy, deadline()), graph)
    found = {e.chunk_id: (round(e.score, 9), e.origins, e.path[2].via) for e in result.expansions}
    assert found == {
        "a50": (0.5, 1, "REFERENCES"),
        "a53": (0.2, 1, "<-REFERENCES"),
        "a51": (0.5, 1, "REFERENCES"),
    }


def test_a_relation_between_seed_nodes_does_not_reach_a_seed_again() -> None:
    graph = FakeGraph(
        {"x": True, "y": True},
        [("nx", "x", SUPPORTS), ("ny", "y", SUPPORTS)],
        [("nx", "REFERENCES", "ny")],
    )
    answered: list[walk.Query] = []

    def answer(query: walk.Query) -> None:
        answered.append(query)
        match query:
            case walk.VisibleNodes(ids):
                query.rows = [walk.SeedNode(n, NodeKind.ENTITY) for n in ids]
            case walk.StatingChunks():
                query.rows = []
            case _:
                graph(query)

    result = walk.run(walk.neighbourhood(["nx", "ny"], ExpansionPolicy(), deadline()), answer)
    assert sorted((e.chunk_id, e.hops) for e in result.expansions) == [("x", 0), ("y", 0)]
