"""Graph reads of the embedded store: expansion, neighbourhoods, entity lookup, derived text.

Every statement carries the caller's scopes (``:scopes``, a JSON array) and checks visibility
inside the SQL: a chunk is visible when its document holds one of the scopes; a relation when
at least one supporting chunk is visible; a node through a visible home chunk (or, known only
from mentions, a visible mention). A name key or a type is shown only through a visible
declaration of it (:mod:`graphctx.store.declarations`). A traversal never steps onto a node,
relation or chunk that fails the check; it counts the blocked step instead (``withheld``), and
never reports which one it was. The traversal itself (bounds, scoring, paths) is
:mod:`graphctx.store.graph_walk`; this module answers its queries.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from graphctx.contract import NodeKind
from graphctx.store import graph_walk as walk
from graphctx.store.records import (
    MENTIONS,
    EntityMatch,
    ExpansionPolicy,
    ExpansionResult,
    NodeText,
)

RELATION_COUNT_CAP = 100


def _doc_visible(doc: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM document_scopes ds WHERE ds.doc = {doc}"
        " AND ds.scope IN (SELECT value FROM json_each(:scopes)))"
    )


def _node_visible(node: str) -> str:
    """A node with home support (any link but MENTIONS: it states, describes or contains the
    node) is visible through a visible home chunk only; a node known only from mentions,
    through a visible mention. So a mention never shows a hidden document's node."""
    support = (
        "SELECT 1 FROM node_support vs JOIN chunks vc ON vc.id = vs.chunk"
        f" WHERE vs.namespace = :ns AND vs.node_id = {node}"
    )
    return (
        f"(EXISTS ({support} AND vs.link <> '{MENTIONS}' AND {_doc_visible('vc.doc')})"
        f" OR (NOT EXISTS ({support} AND vs.link <> '{MENTIONS}')"
        f" AND EXISTS ({support} AND {_doc_visible('vc.doc')})))"
    )


def _declared_visibly(node: str, attribute: str, value: str) -> str:
    """Some declaration that introduced ``attribute = value`` for ``node`` is visible: one of
    its chunks is visible and, unless it only mentions the node, none is hidden (the
    derived-text rule per declaration; a hidden declaration never hides a visible one)."""
    support = (
        "SELECT 1 FROM declaration_support ds JOIN chunks dc ON dc.id = ds.chunk"
        " WHERE ds.namespace = :ns AND ds.declaration = nd.declaration"
    )
    return (
        "EXISTS (SELECT 1 FROM node_declarations nd"
        f" WHERE nd.namespace = :ns AND nd.node_id = {node} AND nd.attribute = '{attribute}'"
        f" AND nd.value = {value} AND EXISTS ({support} AND {_doc_visible('dc.doc')})"
        f" AND NOT EXISTS ({support} AND ds.home AND NOT {_doc_visible('dc.doc')}))"
    )


def _key_visible(key: str, node: str) -> str:
    return _declared_visibly(node, "key", key)


def _shown_type(node: str) -> str:
    """The node's type (``n.node_type``) where a declaration of it is visible, else NULL."""
    return f"CASE WHEN {_declared_visibly(node, 'type', 'n.node_type')} THEN n.node_type END"


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
    SELECT s.chunk, s.node_id, s.link, s.role, n.kind, {_degree("s.node_id")} AS degree,
           {_node_visible("s.node_id")} AS visible
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
    SELECT nn.key, n.node_id, n.kind, {_shown_type("n.node_id")} FROM node_names nn
    JOIN nodes n ON n.namespace = nn.namespace AND n.node_id = nn.node_id
    WHERE nn.namespace = :ns AND nn.key IN (SELECT value FROM json_each(:keys))
      AND {_node_visible("n.node_id")} AND {_key_visible("nn.key", "n.node_id")}
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
    SELECT n.node_id, n.kind, {_shown_type("n.node_id")}, n.name, n.description,
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


class _Answers:
    """Answers a walk's queries with one statement each, visibility checked in the SQL."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        namespace: str,
        scopes: frozenset[str],
        policy: ExpansionPolicy,
    ) -> None:
        self.conn = conn
        types = None if policy.relation_types is None else sorted(policy.relation_types)
        self.params: dict[str, object] = {
            "ns": namespace,
            "scopes": json.dumps(sorted(scopes)),
            "hub": policy.max_node_support,
            "types": None if types is None else json.dumps(types),
            "forward_only": json.dumps(sorted(policy.forward_only)),
        }

    def rows(self, sql: str, ids: Iterable[object]) -> list[tuple[object, ...]]:
        params = {**self.params, "ids": json.dumps(list(ids))}
        return self.conn.execute(sql, params).fetchall()

    def __call__(self, query: walk.Query) -> None:
        match query:
            case walk.VisibleChunks(ids):
                query.rows = [
                    walk.AnchorChunk(_int(row), str(cid), str(doc))
                    for row, cid, doc in self.rows(_VISIBLE_CHUNKS, ids)
                ]
            case walk.VisibleNodes(ids):
                query.rows = [
                    walk.SeedNode(str(node_id), NodeKind(str(kind)))
                    for node_id, kind in self.rows(_VISIBLE_NODES, ids)
                ]
            case walk.NodesOfChunks(ids):
                query.rows = [
                    walk.ChunkNode(
                        _int(chunk),
                        str(node),
                        str(link),
                        _opt(role),
                        NodeKind(str(kind)),
                        _int(n),
                        bool(ok),
                    )
                    for chunk, node, link, role, kind, n, ok in self.rows(_NODES_OF_CHUNKS, ids)
                ]
            case walk.Relations(ids, incoming):
                sql = _RELATIONS_IN if incoming else _RELATIONS_OUT
                query.rows = [
                    walk.RelationEdge(
                        _int(rel),
                        str(near),
                        str(far),
                        str(rtype),
                        NodeKind(str(kind)),
                        bool(rel_ok and node_ok),
                        _int(degree),
                    )
                    for rel, near, far, rtype, kind, rel_ok, node_ok, degree in self.rows(sql, ids)
                ]
            case walk.StatingChunks(ids):
                query.rows = [
                    walk.StatingChunk(_int(rel), _int(row), str(cid))
                    for rel, row, cid in self.rows(_STATING_CHUNKS, ids)
                ]
            case walk.ChunksOfNodes(ids):
                query.rows = [
                    walk.NodeChunk(
                        str(node), _int(row), str(cid), str(doc), str(link), _opt(role), bool(ok)
                    )
                    for node, row, cid, doc, link, role, ok in self.rows(_CHUNKS_OF_NODES, ids)
                ]


def expand(
    conn: sqlite3.Connection,
    namespace: str,
    anchors: Mapping[str, float],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    answers = _Answers(conn, namespace, scopes, policy)
    return walk.run(walk.expand(anchors, policy, deadline), answers)


def neighbourhood(
    conn: sqlite3.Connection,
    namespace: str,
    node_ids: Sequence[str],
    scopes: frozenset[str],
    policy: ExpansionPolicy,
    deadline: float,
) -> ExpansionResult:
    answers = _Answers(conn, namespace, scopes, policy)
    return walk.run(walk.neighbourhood(node_ids, policy, deadline), answers)


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
