"""Graph reads on Neo4j: expansion, neighbourhoods, entity lookup, derived text.

The traversal mirrors :mod:`graphctx.store.sqlite.graph` step for step (same bounds, same
ordering, same ``withheld`` accounting), with one Cypher statement per step, all inside the
caller's READ transaction. Every statement carries the caller's scopes and checks visibility
inside the query: a chunk is visible when its document holds one of the scopes; a node or a
relation when at least one supporting chunk is visible. A blocked step is counted, never named.

Chunks are identified by their per-namespace ``seq`` (insertion order, the embedded store's
row id) and relations by theirs, so tie-breaks follow the embedded store.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import neo4j
from graphctx.contract import NodeKind
from graphctx.store.neo4j import queries
from graphctx.store.port import StageTimeout
from graphctx.store.records import (
    MENTIONS,
    REVERSE,
    STATES,
    Direction,
    EntityMatch,
    Expansion,
    ExpansionPolicy,
    ExpansionResult,
    NodeText,
    PathStep,
)

RELATION_COUNT_CAP = 100
STATING_CHUNKS_PER_RELATION = 2

Row = dict[str, Any]


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


def _via(link: str, role: str | None) -> str:
    return f"{link}({role})" if role else link


@dataclass(frozen=True)
class _Reach:
    score: float
    hops: int
    path: tuple[PathStep, ...]
    origin_row: int = -1  # the anchor chunk a path started from (never reached from itself)
    origin_document: str | None = None  # its document (skipped unless the policy allows)


def _better(new: _Reach, old: _Reach | None) -> bool:
    return old is None or (new.score, -new.hops) > (old.score, -old.hops)


_Reaches = dict[str, list[_Reach]]
_Found = dict[int, tuple[str, _Reach]]  # chunk seq -> (chunk id, best reach)


def _offer(reaches: _Reaches, node: str, candidate: _Reach) -> None:
    """Keep ``candidate`` if it is the node's best reach from its origin anchor."""
    current = reaches.setdefault(node, [])
    for index, reach in enumerate(current):
        if reach.origin_row == candidate.origin_row:
            if _better(candidate, reach):
                current[index] = candidate
            break
    else:
        current.append(candidate)
    current.sort(key=lambda r: (-r.score, r.hops, r.origin_row))


def _best_first(frontier: Mapping[int, _Reach]) -> list[tuple[int, _Reach]]:
    return sorted(frontier.items(), key=lambda item: (-item[1].score, item[1].path[-1].id))


class _Walk:
    """One traversal's state: bounds, what was seen, what was withheld."""

    def __init__(
        self,
        tx: neo4j.AsyncTransaction,
        namespace: str,
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> None:
        self.tx = tx
        self.policy = policy
        self.deadline = deadline
        types = None if policy.relation_types is None else sorted(policy.relation_types)
        self.params: dict[str, object] = {
            "namespace": namespace,
            "scopes": sorted(scopes),
            "types": types,
            "forward_only": sorted(policy.forward_only),
        }
        self.visited_nodes: set[str] = set()  # counted against max_nodes
        self.walked: set[str] = set()  # nodes whose relations were already walked
        self.withheld: set[tuple[str, object]] = set()
        self.support: dict[int, list[str]] = {}  # relation seq -> supporting chunk ids

    async def rows(self, query: str, ids: Iterable[object]) -> list[Row]:
        if time.monotonic() > self.deadline:
            raise StageTimeout("graph expansion passed its deadline")
        result = await self.tx.run(query, {**self.params, "ids": list(ids)})
        return [record.data() async for record in result]

    def room(self) -> bool:
        return len(self.visited_nodes) < self.policy.max_nodes

    # --- steps ----------------------------------------------------------------------------
    async def nodes_of_chunks(self, frontier: Mapping[int, _Reach]) -> _Reaches:
        """chunk -> node: the nodes each frontier chunk supports (specific nodes first)."""
        by_chunk: dict[int, list[tuple[int, str, str, str | None, str]]] = {}
        for row in await self.rows(queries.GRAPH_NODES_OF_CHUNKS, frontier):
            degree = int(row["degree"])
            if degree <= self.policy.max_node_support:
                entry = (
                    degree,
                    str(row["node_id"]),
                    str(row["link"]),
                    _opt(row["role"]),
                    str(row["kind"]),
                )
                by_chunk.setdefault(int(row["row"]), []).append(entry)
        reached: _Reaches = {}
        for chunk, reach in _best_first(frontier):
            for _, node_id, link, role, kind in sorted(by_chunk.get(chunk, []))[
                : self.policy.max_fanout
            ]:
                if node_id not in reached and (node_id in self.walked or not self.room()):
                    continue
                step = PathStep(NodeKind(kind), node_id, _via(link, role))
                _offer(reached, node_id, replace(reach, path=(*reach.path, step)))
                self.visited_nodes.add(node_id)
        return reached

    async def related(
        self, nodes: _Reaches, direction: Direction
    ) -> tuple[_Reaches, dict[int, list[_Reach]]]:
        """node -[RELATION]- node: visible relations to visible nodes, per direction.

        Returns the newly reached nodes and, per walked relation seq, the reaches of its far
        end (for the chunks that state the relation).
        """
        self.walked.update(nodes)
        if self.policy.relation_types == frozenset() or not nodes:
            return {}, {}
        found: list[tuple[str, str, int, str, str, str]] = []
        walks = []
        if direction in (Direction.OUT, Direction.BOTH):
            walks.append((queries.GRAPH_RELATIONS_OUT, ""))
        if direction in (Direction.IN, Direction.BOTH):
            walks.append((queries.GRAPH_RELATIONS_IN, REVERSE))
        for query, prefix in walks:
            for row in await self.rows(query, nodes):
                rel = int(row["rel"])
                if not (row["relation_visible"] and row["node_visible"]):
                    self.withheld.add(("relation", rel))
                    continue
                if int(row["degree"]) > self.policy.max_node_support:
                    continue
                self.support[rel] = [str(cid) for cid in row["support"]]
                found.append(
                    (
                        str(row["near"]),
                        str(row["relation_type"]),
                        rel,
                        str(row["far"]),
                        str(row["kind"]),
                        prefix,
                    )
                )
        per_node: dict[str, int] = {}
        reached: _Reaches = {}
        via_relation: dict[int, list[_Reach]] = {}
        for near, rtype, rel, far, kind, prefix in sorted(found):
            if per_node.get(near, 0) >= self.policy.max_fanout or far in nodes:
                continue
            if far not in reached and (far in self.visited_nodes or not self.room()):
                continue
            per_node[near] = per_node.get(near, 0) + 1
            step = PathStep(NodeKind(kind), far, prefix + rtype)
            extended = [replace(r, path=(*r.path, step)) for r in nodes[near]]
            via_relation[rel] = extended
            for candidate in extended:
                _offer(reached, far, candidate)
            self.visited_nodes.add(far)
        return reached, via_relation

    async def stating_chunks(
        self, via_relation: Mapping[int, list[_Reach]], factor: float, hops: int, seen: set[int]
    ) -> _Found:
        """relation -> chunk: up to two visible chunks stating each walked relation."""
        wanted = sorted({cid for rel in via_relation for cid in self.support.get(rel, [])})
        visible = {
            str(r["chunk_id"]): r for r in await self.rows(queries.GRAPH_STATING_CHUNKS, wanted)
        }
        stating = sorted(
            (rel, not visible[cid]["is_latest"], int(visible[cid]["row"]), cid)
            for rel in via_relation
            for cid in self.support.get(rel, [])
            if cid in visible
        )
        taken: dict[int, int] = {}
        reached: _Found = {}
        for rel, _, row, chunk_id in stating:
            origin = next((r for r in via_relation[rel] if r.origin_row != row), None)
            if origin is None or row in seen or taken.get(rel, 0) >= STATING_CHUNKS_PER_RELATION:
                continue
            taken[rel] = taken.get(rel, 0) + 1
            step = PathStep(NodeKind.CHUNK, chunk_id, REVERSE + STATES)
            candidate = replace(
                origin, score=origin.score * factor, hops=hops, path=(*origin.path, step)
            )
            if _better(candidate, reached.get(row, (None, None))[1]):
                reached[row] = (chunk_id, candidate)
        return reached

    async def chunks_of_nodes(
        self, nodes: _Reaches, factor: float, hops: int, seen: set[int]
    ) -> _Found:
        """node -> chunk: visible supporting chunks (home chunks before mentions), never the
        path's own anchor (nor, unless the policy allows it, the anchor's document)."""
        same_document = self.policy.include_same_document
        taken: dict[str, int] = {}
        hidden: dict[str, int] = {}
        reached: _Found = {}
        for found in await self.rows(queries.GRAPH_CHUNKS_OF_NODES, sorted(nodes)):
            node, row = str(found["node_id"]), int(found["row"])
            document_id, chunk_id = str(found["document_id"]), str(found["chunk_id"])
            origin = next(
                (
                    r
                    for r in nodes[node]
                    if r.origin_row != row and (same_document or r.origin_document != document_id)
                ),
                None,
            )
            if origin is None or row in seen:
                continue
            if not found["visible"]:
                if hidden.get(node, 0) < self.policy.max_fanout:
                    hidden[node] = hidden.get(node, 0) + 1
                    self.withheld.add(("chunk", row))
                continue
            if taken.get(node, 0) >= self.policy.max_fanout:
                continue
            taken[node] = taken.get(node, 0) + 1
            link = str(found["link"])
            step = PathStep(NodeKind.CHUNK, chunk_id, REVERSE + _via(link, _opt(found["role"])))
            weight = self.policy.mention_weight if link == MENTIONS else 1.0
            candidate = replace(
                origin, score=origin.score * factor * weight, hops=hops, path=(*origin.path, step)
            )
            if _better(candidate, reached.get(row, (None, None))[1]):
                reached[row] = (chunk_id, candidate)
        return reached

    def result(self, reached: Mapping[int, tuple[str, _Reach]]) -> ExpansionResult:
        ordered = sorted(
            (Expansion(chunk_id, r.hops, r.score, r.path) for chunk_id, r in reached.values()),
            key=lambda e: (-e.score, e.hops, e.chunk_id),
        )
        return ExpansionResult(
            tuple(ordered[: self.policy.max_results]),
            withheld=len(self.withheld),
            nodes_visited=len(self.visited_nodes),
        )


async def expand(
    tx: neo4j.AsyncTransaction,
    namespace: str,
    anchors: Mapping[str, float],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    walk = _Walk(tx, namespace, scopes, policy, deadline)
    if not anchors or policy.max_hops == 0:
        return walk.result({})
    frontier = {
        int(row["row"]): _Reach(
            anchors[str(row["chunk_id"])],
            0,
            (PathStep(NodeKind.CHUNK, str(row["chunk_id"])),),
            int(row["row"]),
            str(row["document_id"]),
        )
        for row in await walk.rows(queries.GRAPH_VISIBLE_CHUNKS, sorted(anchors))
    }
    anchor_rows = set(frontier)
    seen: set[int] = set()  # another anchor may be reached: the graph then confirms it
    reached: _Found = {}
    for hop in range(1, policy.max_hops + 1):
        if not frontier:
            break
        direct = await walk.nodes_of_chunks(frontier)
        related, _ = await walk.related(direct, policy.direction)
        nodes = {**(direct if policy.via_shared_nodes else {}), **related}
        found = await walk.chunks_of_nodes(nodes, policy.hop_decay, hop, seen)
        reached.update(found)
        seen.update(found)
        fresh = [item for item in found.items() if item[0] not in anchor_rows]
        ranked = sorted(fresh, key=lambda item: (-item[1][1].score, item[1][0]))
        frontier = {row: r for row, (_, r) in ranked[: policy.max_fanout]}
    return walk.result(reached)


async def neighbourhood(
    tx: neo4j.AsyncTransaction,
    namespace: str,
    node_ids: Sequence[str],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    walk = _Walk(tx, namespace, scopes, policy, deadline)
    if not node_ids:
        return walk.result({})
    seeds = {
        str(row["node_id"]): [
            _Reach(1.0, 0, (PathStep(NodeKind(str(row["kind"])), str(row["node_id"])),))
        ]
        for row in await walk.rows(queries.GRAPH_VISIBLE_NODES, sorted(set(node_ids)))
    }
    walk.visited_nodes.update(seeds)
    seen: set[int] = set()
    reached = await walk.chunks_of_nodes(seeds, 1.0, 0, seen)
    seen.update(reached)
    current = seeds
    for hop in range(1, max(1, policy.max_hops) + 1):
        neighbours, via_relation = await walk.related(current, policy.direction)
        if not neighbours:
            break
        stating = await walk.stating_chunks(via_relation, policy.hop_decay**hop, hop, seen)
        for row, entry in stating.items():
            if _better(entry[1], reached.get(row, (None, None))[1]):
                reached[row] = entry
        seen.update(stating)
        found = await walk.chunks_of_nodes(neighbours, policy.hop_decay**hop, hop, seen)
        reached.update(found)
        seen.update(found)
        current = neighbours
    return walk.result(reached)


async def lookup_entities(
    tx: neo4j.AsyncTransaction,
    namespace: str,
    keys: Sequence[str],
    scopes: frozenset[str],
    limit: int,
) -> list[EntityMatch]:
    params = {"namespace": namespace, "scopes": sorted(scopes)}
    result = await tx.run(
        queries.LOOKUP_ENTITIES, {**params, "keys": sorted(set(keys)), "limit": limit}
    )
    found = [record.data() async for record in result]
    if not found:
        return []
    result = await tx.run(
        queries.RELATION_COUNTS,
        {**params, "ids": sorted({str(r["node_id"]) for r in found}), "cap": RELATION_COUNT_CAP},
    )
    counts = {str(r["node_id"]): int(r["relation_count"]) async for r in result}
    return [
        EntityMatch(
            str(r["node_id"]),
            NodeKind(str(r["kind"])),
            _opt(r["node_type"]),
            str(r["key"]),
            counts[str(r["node_id"])],
        )
        for r in found
    ]


async def describe_nodes(
    tx: neo4j.AsyncTransaction, namespace: str, node_ids: Sequence[str], scopes: frozenset[str]
) -> list[NodeText]:
    result = await tx.run(
        queries.DESCRIBE_NODES,
        {"namespace": namespace, "scopes": sorted(scopes), "ids": sorted(set(node_ids))},
    )
    return [
        NodeText(
            str(r["node_id"]),
            NodeKind(str(r["kind"])),
            _opt(r["node_type"]),
            _opt(r["name"]) if r["fully_visible"] else None,
            _opt(r["description"]) if r["fully_visible"] else None,
        )
        async for r in result
    ]
