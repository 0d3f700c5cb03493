"""Graph reads on Neo4j: expansion, neighbourhoods, entity lookup, derived text.

The traversal is :mod:`graphctx.store.graph_walk`, shared with the embedded store (same
bounds, same ordering, same ``withheld`` accounting); this module answers its queries with one
Cypher statement each, all inside the caller's READ transaction. Every statement carries the
caller's scopes and checks visibility inside the query: a chunk is visible when its document
holds one of the scopes; a relation when at least one supporting chunk is visible; a node
through a visible home chunk (or, known only from mentions, a visible mention). A name key or a
type is shown only when the chunks whose declarations introduced it include a visible one and
no hidden home chunk. A blocked step is counted, never named.

Chunks are identified by their per-namespace ``seq`` (insertion order, the embedded store's
row id) and relations by theirs, so tie-breaks follow the embedded store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import neo4j

from graphctx.contract import NodeKind
from graphctx.store import graph_walk as walk
from graphctx.store.neo4j import graph_queries as gq
from graphctx.store.records import EntityMatch, ExpansionPolicy, ExpansionResult, NodeText

RELATION_COUNT_CAP = 100

Row = dict[str, Any]


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


class _Answers:
    """Answers a walk's queries with one Cypher statement each, inside the caller's READ
    transaction, visibility checked in the query."""

    def __init__(
        self,
        tx: neo4j.AsyncTransaction,
        namespace: str,
        scopes: frozenset[str],
        policy: ExpansionPolicy,
    ) -> None:
        self.tx = tx
        types = None if policy.relation_types is None else sorted(policy.relation_types)
        self.params: dict[str, object] = {
            "namespace": namespace,
            "scopes": sorted(scopes),
            "types": types,
            "forward_only": sorted(policy.forward_only),
        }
        self.support: dict[int, list[str]] = {}  # relation seq -> supporting chunk ids

    async def rows(self, query: str, ids: Iterable[object]) -> list[Row]:
        result = await self.tx.run(query, {**self.params, "ids": list(ids)})
        return [record.data() async for record in result]

    async def __call__(self, query: walk.Query) -> None:
        match query:
            case walk.VisibleChunks(ids):
                query.rows = [
                    walk.AnchorChunk(int(r["row"]), str(r["chunk_id"]), str(r["document_id"]))
                    for r in await self.rows(gq.GRAPH_VISIBLE_CHUNKS, ids)
                ]
            case walk.VisibleNodes(ids):
                query.rows = [
                    walk.SeedNode(str(r["node_id"]), NodeKind(str(r["kind"])))
                    for r in await self.rows(gq.GRAPH_VISIBLE_NODES, ids)
                ]
            case walk.NodesOfChunks(ids):
                query.rows = [
                    walk.ChunkNode(
                        int(r["row"]),
                        str(r["node_id"]),
                        str(r["link"]),
                        _opt(r["role"]),
                        NodeKind(str(r["kind"])),
                        int(r["degree"]),
                        bool(r["visible"]),
                    )
                    for r in await self.rows(gq.GRAPH_NODES_OF_CHUNKS, ids)
                ]
            case walk.Relations(ids, incoming):
                cypher = gq.GRAPH_RELATIONS_IN if incoming else gq.GRAPH_RELATIONS_OUT
                query.rows = [self.edge(r) for r in await self.rows(cypher, ids)]
            case walk.StatingChunks(ids):
                query.rows = await self.stating(ids)
            case walk.ChunksOfNodes(ids):
                query.rows = [
                    walk.NodeChunk(
                        str(r["node_id"]),
                        int(r["row"]),
                        str(r["chunk_id"]),
                        str(r["document_id"]),
                        str(r["link"]),
                        _opt(r["role"]),
                        bool(r["visible"]),
                    )
                    for r in await self.rows(gq.GRAPH_CHUNKS_OF_NODES, ids)
                ]

    def edge(self, row: Row) -> walk.RelationEdge:
        """A relation row; its support (chunk ids on the relation) is kept for
        :meth:`stating`."""
        edge = walk.RelationEdge(
            int(row["rel"]),
            str(row["near"]),
            str(row["far"]),
            str(row["relation_type"]),
            NodeKind(str(row["kind"])),
            bool(row["relation_visible"] and row["node_visible"]),
            int(row["degree"]),
        )
        if edge.visible:
            self.support[edge.relation] = [str(cid) for cid in row["support"]]
        return edge

    async def stating(self, relations: Iterable[int]) -> list[walk.StatingChunk]:
        """The visible chunks among each relation's support, latest version first."""
        relations = list(relations)
        wanted = sorted({cid for rel in relations for cid in self.support.get(rel, [])})
        visible = {str(r["chunk_id"]): r for r in await self.rows(gq.GRAPH_STATING_CHUNKS, wanted)}
        stating = sorted(
            (rel, not visible[cid]["is_latest"], int(visible[cid]["row"]), cid)
            for rel in relations
            for cid in self.support.get(rel, [])
            if cid in visible
        )
        return [walk.StatingChunk(rel, row, cid) for rel, _, row, cid in stating]


async def expand(
    tx: neo4j.AsyncTransaction,
    namespace: str,
    anchors: Mapping[str, float],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    answers = _Answers(tx, namespace, scopes, policy)
    return await walk.run_async(walk.expand(anchors, policy, deadline), answers)


async def neighbourhood(
    tx: neo4j.AsyncTransaction,
    namespace: str,
    node_ids: Sequence[str],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    answers = _Answers(tx, namespace, scopes, policy)
    return await walk.run_async(walk.neighbourhood(node_ids, policy, deadline), answers)


def lookup_parameters(
    namespace: str, keys: Sequence[str], scopes: frozenset[str], limit: int
) -> dict[str, object]:
    """The parameters of ``gq.LOOKUP_ENTITIES_WITH_COUNTS``."""
    return {
        "namespace": namespace,
        "scopes": sorted(scopes),
        "keys": sorted(set(keys)),
        "limit": limit,
        "cap": RELATION_COUNT_CAP,
    }


def entity_matches(rows: Iterable[Row]) -> list[EntityMatch]:
    """``gq.LOOKUP_ENTITIES_WITH_COUNTS``' rows as matches, in their order."""
    return [
        EntityMatch(
            str(r["node_id"]),
            NodeKind(str(r["kind"])),
            _opt(r["node_type"]),
            str(r["key"]),
            int(r["relation_count"]),
        )
        for r in rows
    ]


async def describe_nodes(
    tx: neo4j.AsyncTransaction, namespace: str, node_ids: Sequence[str], scopes: frozenset[str]
) -> list[NodeText]:
    result = await tx.run(
        gq.DESCRIBE_NODES,
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
