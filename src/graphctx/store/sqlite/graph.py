"""Graph reads of the embedded store: expansion, neighbourhoods, entity lookup, derived text.

Every statement carries the caller's scopes (``:scopes``, a JSON array) and checks visibility
inside the SQL: a chunk is visible when its document holds one of the scopes; a node or a
relation when at least one supporting chunk is visible. A traversal never steps onto a
node, relation or chunk that fails the check; it counts the blocked step instead
(``withheld``), and never reports which one it was.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from graphctx.contract import NodeKind
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


def _doc_visible(doc: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM document_scopes ds WHERE ds.doc = {doc}"
        " AND ds.scope IN (SELECT value FROM json_each(:scopes)))"
    )


def _node_visible(node: str) -> str:
    return (
        "EXISTS (SELECT 1 FROM node_support vs JOIN chunks vc ON vc.id = vs.chunk"
        f" WHERE vs.namespace = :ns AND vs.node_id = {node} AND {_doc_visible('vc.doc')})"
    )


def _relation_visible(relation: str) -> str:
    return (
        "EXISTS (SELECT 1 FROM relation_support vr JOIN chunks rc ON rc.id = vr.chunk"
        f" WHERE vr.relation = {relation} AND {_doc_visible('rc.doc')})"
    )


def _degree(node: str) -> str:
    return (
        "(SELECT count(*) FROM (SELECT 1 FROM node_support x"
        f" WHERE x.namespace = :ns AND x.node_id = {node} LIMIT :hub + 1))"
    )


_NODES_OF_CHUNKS = f"""
    SELECT s.chunk, s.node_id, s.link, s.role, n.kind, {_degree("s.node_id")} AS degree
    FROM node_support s JOIN nodes n ON n.namespace = s.namespace AND n.node_id = s.node_id
    WHERE s.namespace = :ns AND s.chunk IN (SELECT value FROM json_each(:ids))
"""

_CHUNKS_OF_NODES = f"""
    SELECT s.node_id, c.id, c.chunk_id, d.document_id, s.link, s.role, {_doc_visible("c.doc")}
    FROM node_support s JOIN chunks c ON c.id = s.chunk JOIN documents d ON d.id = c.doc
    WHERE s.namespace = :ns AND s.node_id IN (SELECT value FROM json_each(:ids))
    ORDER BY s.node_id, CASE s.link WHEN '{MENTIONS}' THEN 1 ELSE 0 END, d.is_latest DESC,
             c.ordinal, c.id
"""


def _relations_from(near: str, far: str, *, reverse: bool) -> str:
    """Relations whose ``near`` end is in ``:ids``, with visibility flags for the far end;
    walked against their direction, types in ``:forward_only`` are skipped."""
    skip = (
        " AND r.relation_type NOT IN (SELECT value FROM json_each(:forward_only))"
        if reverse
        else ""
    )
    return f"""
    SELECT r.id, r.{near}, r.{far}, r.relation_type, n.kind,
           {_relation_visible("r.id")}, {_node_visible("r." + far)}, {_degree("r." + far)}
    FROM relations r JOIN nodes n ON n.namespace = r.namespace AND n.node_id = r.{far}
    WHERE r.namespace = :ns AND r.{near} IN (SELECT value FROM json_each(:ids))
      AND (:types IS NULL OR r.relation_type IN (SELECT value FROM json_each(:types))){skip}
    """


_RELATIONS_OUT = _relations_from("source_id", "target_id", reverse=False)
_RELATIONS_IN = _relations_from("target_id", "source_id", reverse=True)

_STATING_CHUNKS = f"""
    SELECT vr.relation, c.id, c.chunk_id FROM relation_support vr
    JOIN chunks c ON c.id = vr.chunk JOIN documents d ON d.id = c.doc
    WHERE vr.relation IN (SELECT value FROM json_each(:ids)) AND {_doc_visible("c.doc")}
    ORDER BY vr.relation, d.is_latest DESC, c.id
"""

_VISIBLE_CHUNKS = f"""
    SELECT c.id, c.chunk_id, d.document_id FROM chunks c JOIN documents d ON d.id = c.doc
    WHERE c.namespace = :ns AND c.chunk_id IN (SELECT value FROM json_each(:ids))
      AND {_doc_visible("c.doc")}
"""

_VISIBLE_NODES = f"""
    SELECT n.node_id, n.kind FROM nodes n
    WHERE n.namespace = :ns AND n.node_id IN (SELECT value FROM json_each(:ids))
      AND {_node_visible("n.node_id")}
"""

_LOOKUP = f"""
    SELECT nn.key, n.node_id, n.kind, n.node_type FROM node_names nn
    JOIN nodes n ON n.namespace = nn.namespace AND n.node_id = nn.node_id
    WHERE nn.namespace = :ns AND nn.key IN (SELECT value FROM json_each(:keys))
      AND {_node_visible("n.node_id")}
    ORDER BY nn.key, n.node_id LIMIT :limit
"""

_RELATION_COUNT = f"""
    SELECT (SELECT count(*) FROM (SELECT 1 FROM relations r
             WHERE r.namespace = :ns AND r.source_id = :id AND {_relation_visible("r.id")}
               AND {_node_visible("r.target_id")} LIMIT {RELATION_COUNT_CAP}))
         + (SELECT count(*) FROM (SELECT 1 FROM relations r
             WHERE r.namespace = :ns AND r.target_id = :id AND {_relation_visible("r.id")}
               AND {_node_visible("r.source_id")} LIMIT {RELATION_COUNT_CAP}))
         + (SELECT count(*) FROM (SELECT 1 FROM node_support s JOIN chunks c ON c.id = s.chunk
             WHERE s.namespace = :ns AND s.node_id = :id AND s.link = '{MENTIONS}'
               AND {_doc_visible("c.doc")} LIMIT {RELATION_COUNT_CAP}))
"""

_DESCRIBE = f"""
    SELECT n.node_id, n.kind, n.node_type, n.name, n.description,
           NOT EXISTS (SELECT 1 FROM node_support s JOIN chunks c ON c.id = s.chunk
                       WHERE s.namespace = :ns AND s.node_id = n.node_id
                         AND NOT {_doc_visible("c.doc")})
    FROM nodes n
    WHERE n.namespace = :ns AND n.node_id IN (SELECT value FROM json_each(:ids))
      AND {_node_visible("n.node_id")}
    ORDER BY n.node_id
"""


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


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


class _Walk:
    """One traversal's state: bounds, what was seen, what was withheld."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        namespace: str,
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> None:
        self.conn = conn
        self.policy = policy
        self.deadline = deadline
        types = None if policy.relation_types is None else sorted(policy.relation_types)
        self.params: dict[str, object] = {
            "ns": namespace,
            "scopes": json.dumps(sorted(scopes)),
            "hub": policy.max_node_support,
            "types": None if types is None else json.dumps(types),
            "forward_only": json.dumps(sorted(policy.forward_only)),
        }
        self.visited_nodes: set[str] = set()  # counted against max_nodes
        self.walked: set[str] = set()  # nodes whose relations were already walked
        self.withheld: set[tuple[str, object]] = set()

    def rows(self, sql: str, ids: Iterable[object], **extra: object) -> list[tuple[object, ...]]:
        if time.monotonic() > self.deadline:
            raise StageTimeout("graph expansion passed its deadline")
        params = {**self.params, "ids": json.dumps(list(ids)), **extra}
        return self.conn.execute(sql, params).fetchall()

    def room(self) -> bool:
        return len(self.visited_nodes) < self.policy.max_nodes

    # --- steps ----------------------------------------------------------------------------
    # A node keeps its best reach per origin anchor, so a chunk can be reached from any anchor
    # but its own: ``_Reaches`` maps node id -> reaches, best first.
    def nodes_of_chunks(self, frontier: Mapping[int, _Reach]) -> _Reaches:
        """chunk -> node: the nodes each frontier chunk supports (specific nodes first)."""
        by_chunk: dict[int, list[tuple[int, str, str, str | None, str]]] = {}
        for chunk, node_id, link, role, kind, degree in self.rows(_NODES_OF_CHUNKS, frontier):
            if _int(degree) <= self.policy.max_node_support:
                entry = (_int(degree), str(node_id), str(link), _opt(role), str(kind))
                by_chunk.setdefault(_int(chunk), []).append(entry)
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

    def related(
        self, nodes: _Reaches, direction: Direction
    ) -> tuple[_Reaches, dict[int, list[_Reach]]]:
        """node -[RELATION]- node: visible relations to visible nodes, per direction.

        Returns the newly reached nodes and, per walked relation id, the reaches of its far
        end (for the chunks that state the relation).
        """
        self.walked.update(nodes)
        if self.policy.relation_types == frozenset() or not nodes:
            return {}, {}
        found: list[tuple[str, str, int, str, str, str]] = []
        walks = []
        if direction in (Direction.OUT, Direction.BOTH):
            walks.append((_RELATIONS_OUT, ""))
        if direction in (Direction.IN, Direction.BOTH):
            walks.append((_RELATIONS_IN, REVERSE))
        for sql, prefix in walks:
            for rel, near, far, rtype, kind, rel_ok, node_ok, degree in self.rows(sql, nodes):
                if not (rel_ok and node_ok):
                    self.withheld.add(("relation", rel))
                    continue
                if _int(degree) > self.policy.max_node_support:
                    continue
                found.append((str(near), str(rtype), _int(rel), str(far), str(kind), prefix))
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

    def stating_chunks(
        self,
        via_relation: Mapping[int, list[_Reach]],
        factor: float,
        hops: int,
        seen: set[int],
    ) -> dict[int, tuple[str, _Reach]]:
        """relation -> chunk: up to two visible chunks stating each walked relation."""
        taken: dict[int, int] = {}
        reached: dict[int, tuple[str, _Reach]] = {}
        for rel, rowid, chunk_id in self.rows(_STATING_CHUNKS, sorted(via_relation)):
            rel_id, row = _int(rel), _int(rowid)
            origin = next((r for r in via_relation[rel_id] if r.origin_row != row), None)
            if origin is None or row in seen or taken.get(rel_id, 0) >= 2:
                continue
            taken[rel_id] = taken.get(rel_id, 0) + 1
            step = PathStep(NodeKind.CHUNK, str(chunk_id), REVERSE + STATES)
            candidate = replace(
                origin, score=origin.score * factor, hops=hops, path=(*origin.path, step)
            )
            if _better(candidate, reached.get(row, (None, None))[1]):
                reached[row] = (str(chunk_id), candidate)
        return reached

    def chunks_of_nodes(
        self,
        nodes: _Reaches,
        factor: float,
        hops: int,
        seen: set[int],
    ) -> dict[int, tuple[str, _Reach]]:
        """node -> chunk: visible supporting chunks (home chunks before mentions), never the
        path's own anchor (nor, unless the policy allows it, the anchor's document)."""
        same_document = self.policy.include_same_document
        taken: dict[str, int] = {}
        hidden: dict[str, int] = {}
        reached: dict[int, tuple[str, _Reach]] = {}
        for node_id, rowid, chunk_id, document_id, link, role, visible in self.rows(
            _CHUNKS_OF_NODES, sorted(nodes)
        ):
            node = str(node_id)
            row = _int(rowid)
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
            if not visible:
                if hidden.get(node, 0) < self.policy.max_fanout:
                    hidden[node] = hidden.get(node, 0) + 1
                    self.withheld.add(("chunk", row))
                continue
            if taken.get(node, 0) >= self.policy.max_fanout:
                continue
            taken[node] = taken.get(node, 0) + 1
            step = PathStep(NodeKind.CHUNK, str(chunk_id), REVERSE + _via(str(link), _opt(role)))
            weight = self.policy.mention_weight if link == MENTIONS else 1.0
            candidate = replace(
                origin, score=origin.score * factor * weight, hops=hops, path=(*origin.path, step)
            )
            if _better(candidate, reached.get(row, (None, None))[1]):
                reached[row] = (str(chunk_id), candidate)
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


def _best_first(frontier: Mapping[int, _Reach]) -> list[tuple[int, _Reach]]:
    return sorted(frontier.items(), key=lambda item: (-item[1].score, item[1].path[-1].id))


def expand(
    conn: sqlite3.Connection,
    namespace: str,
    anchors: Mapping[str, float],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    walk = _Walk(conn, namespace, scopes, policy, deadline)
    if not anchors or policy.max_hops == 0:
        return walk.result({})
    start = walk.rows(_VISIBLE_CHUNKS, sorted(anchors))
    frontier = {
        _int(rowid): _Reach(
            anchors[str(cid)], 0, (PathStep(NodeKind.CHUNK, str(cid)),), _int(rowid), str(doc)
        )
        for rowid, cid, doc in start
    }
    anchor_rows = set(frontier)
    seen: set[int] = set()  # another anchor may be reached: the graph then confirms it
    reached: dict[int, tuple[str, _Reach]] = {}
    for hop in range(1, policy.max_hops + 1):
        if not frontier:
            break
        direct = walk.nodes_of_chunks(frontier)
        related, _ = walk.related(direct, policy.direction)
        nodes = {**(direct if policy.via_shared_nodes else {}), **related}
        found = walk.chunks_of_nodes(nodes, policy.hop_decay, hop, seen)
        reached.update(found)
        seen.update(found)
        fresh = [item for item in found.items() if item[0] not in anchor_rows]
        ranked = sorted(fresh, key=lambda item: (-item[1][1].score, item[1][0]))
        frontier = {row: r for row, (_, r) in ranked[: policy.max_fanout]}
    return walk.result(reached)


def neighbourhood(
    conn: sqlite3.Connection,
    namespace: str,
    node_ids: Sequence[str],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    walk = _Walk(conn, namespace, scopes, policy, deadline)
    if not node_ids:
        return walk.result({})
    seeds = {
        str(node_id): [_Reach(1.0, 0, (PathStep(NodeKind(str(kind)), str(node_id)),))]
        for node_id, kind in walk.rows(_VISIBLE_NODES, sorted(set(node_ids)))
    }
    walk.visited_nodes.update(seeds)
    seen: set[int] = set()
    reached = walk.chunks_of_nodes(seeds, 1.0, 0, seen)
    seen.update(reached)
    current = seeds
    for hop in range(1, max(1, policy.max_hops) + 1):
        neighbours, via_relation = walk.related(current, policy.direction)
        if not neighbours:
            break
        stating = walk.stating_chunks(via_relation, policy.hop_decay**hop, hop, seen)
        for row, entry in stating.items():
            if _better(entry[1], reached.get(row, (None, None))[1]):
                reached[row] = entry
        seen.update(stating)
        found = walk.chunks_of_nodes(neighbours, policy.hop_decay**hop, hop, seen)
        reached.update(found)
        seen.update(found)
        current = neighbours
    return walk.result(reached)


def lookup_entities(
    conn: sqlite3.Connection,
    namespace: str,
    keys: Sequence[str],
    scopes: frozenset[str],
    limit: int,
) -> list[EntityMatch]:
    if not keys or not scopes:
        return []
    params: dict[str, object] = {
        "ns": namespace,
        "scopes": json.dumps(sorted(scopes)),
        "keys": json.dumps(sorted(set(keys))),
        "limit": limit,
    }
    matches: list[EntityMatch] = []
    for key, node_id, kind, node_type in conn.execute(_LOOKUP, params).fetchall():
        count = conn.execute(_RELATION_COUNT, {**params, "id": node_id}).fetchone()[0]
        matches.append(EntityMatch(str(node_id), NodeKind(kind), node_type, str(key), int(count)))
    return matches


def describe_nodes(
    conn: sqlite3.Connection,
    namespace: str,
    node_ids: Sequence[str],
    scopes: frozenset[str],
) -> list[NodeText]:
    if not node_ids or not scopes:
        return []
    params = {
        "ns": namespace,
        "scopes": json.dumps(sorted(scopes)),
        "ids": json.dumps(sorted(set(node_ids))),
    }
    return [
        NodeText(
            str(node_id),
            NodeKind(kind),
            node_type,
            name if fully_visible else None,
            description if fully_visible else None,
        )
        for node_id, kind, node_type, name, description, fully_visible in conn.execute(
            _DESCRIBE, params
        )
    ]
