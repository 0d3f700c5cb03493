"""The graph layer's and text2cypher's read statements (split from queries.py).

The same rules as queries.py: nothing is built from caller input, values travel as
``$parameters``, visibility is checked in every step, never after.
"""

from __future__ import annotations

from typing import Final

# --- graph layer (read path): visibility is checked in every step, never after --------------
CHUNK_VISIBLE: Final = (
    "EXISTS { MATCH (vd:Document)-[:HAS_CHUNK]->(c) WHERE any(s IN vd.scopes WHERE s IN $scopes) }"
)


def _node_visible(node: str) -> str:
    """A node with home support (any link but MENTIONS) is visible through a visible home chunk
    only; a node known only from mentions, through a visible mention. So a mention never shows
    a hidden document's node."""
    seen = "any(ns IN nd.scopes WHERE ns IN $scopes)"
    home = "nl.link <> 'MENTIONS'"
    return (
        f"(EXISTS {{ MATCH ({node})-[nl:FROM_CHUNK]->(:Chunk)<-[:HAS_CHUNK]-(nd:Document)"
        f" WHERE {home} AND {seen} }}"
        f" OR (NOT EXISTS {{ MATCH ({node})-[nl:FROM_CHUNK]->() WHERE {home} }}"
        f" AND EXISTS {{ MATCH ({node})-[:FROM_CHUNK]->(:Chunk)<-[:HAS_CHUNK]-(nd:Document)"
        f" WHERE {seen} }}))"
    )


def _declared_visibly(node: str, said: str) -> str:
    """Some declaration of ``node`` saying ``said`` (about ``dv``) is visible: one of its chunks
    is visible and, unless it only mentions the node, none is hidden (the derived-text rule per
    declaration; a hidden declaration never hides a visible one)."""
    through = "(dv)-[:THROUGH]->(:Chunk)<-[:HAS_CHUNK]-(dd:Document)"
    seen = "any(xs IN dd.scopes WHERE xs IN $scopes)"
    return (
        f"EXISTS {{ MATCH ({node})-[:DECLARED]->(dv:Declaration) WHERE {said}"
        f" AND EXISTS {{ MATCH {through} WHERE {seen} }}"
        f" AND NOT (dv.home AND EXISTS {{ MATCH {through} WHERE NOT {seen} }}) }}"
    )


def _key_visible(key: str, node: str) -> str:
    return _declared_visibly(node, f"{key} IN dv.keys")


def _shown_type(node: str) -> str:
    """The node's type where a declaration of it is visible, else null."""
    visible = _declared_visibly(node, f"dv.node_type = {node}.node_type")
    return f"CASE WHEN {visible} THEN {node}.node_type END"


RELATION_VISIBLE: Final = (
    "any(chunk_id IN r.support WHERE EXISTS {"
    " MATCH (rd:Document)-[:HAS_CHUNK]->(:Chunk {namespace: $namespace, chunk_id: chunk_id})"
    " WHERE any(s IN rd.scopes WHERE s IN $scopes) })"
)


def _degree(node: str) -> str:
    return f"COUNT {{ ({node})-[:FROM_CHUNK]->() }}"


GRAPH_VISIBLE_CHUNKS: Final = f"""
MATCH (c:Chunk {{namespace: $namespace}})
WHERE c.chunk_id IN $ids AND {CHUNK_VISIBLE}
MATCH (d:Document)-[:HAS_CHUNK]->(c)
RETURN c.seq AS row, c.chunk_id AS chunk_id, d.document_id AS document_id
"""

GRAPH_VISIBLE_NODES: Final = f"""
MATCH (k:Knowledge {{namespace: $namespace}})
WHERE k.node_id IN $ids AND {_node_visible("k")}
RETURN k.node_id AS node_id, k.kind AS kind
"""

GRAPH_NODES_OF_CHUNKS: Final = f"""
UNWIND $ids AS row
MATCH (:Chunk {{namespace: $namespace, seq: row}})<-[s:FROM_CHUNK]-(k:Knowledge)
RETURN row, k.node_id AS node_id, s.link AS link, s.role AS role, k.kind AS kind,
       {_degree("k")} AS degree, {_node_visible("k")} AS visible
"""

GRAPH_CHUNKS_OF_NODES: Final = """
UNWIND $ids AS node_id
MATCH (:Knowledge {namespace: $namespace, node_id: node_id})-[s:FROM_CHUNK]->(c:Chunk)
MATCH (d:Document)-[:HAS_CHUNK]->(c)
RETURN node_id, c.seq AS row, c.chunk_id AS chunk_id, d.document_id AS document_id,
       s.link AS link, s.role AS role, any(x IN d.scopes WHERE x IN $scopes) AS visible
ORDER BY node_id, CASE s.link WHEN 'MENTIONS' THEN 1 ELSE 0 END, d.is_latest DESC,
         c.ordinal, c.seq
"""


def _relations(pattern: str, skip: str = "") -> str:
    return f"""
UNWIND $ids AS node_id
MATCH {pattern}
WHERE ($types IS NULL OR type(r) IN $types){skip}
RETURN r.seq AS rel, near.node_id AS near, far.node_id AS far, type(r) AS relation_type,
       far.kind AS kind, r.support AS support, {RELATION_VISIBLE} AS relation_visible,
       {_node_visible("far")} AS node_visible, {_degree("far")} AS degree
"""


GRAPH_RELATIONS_OUT: Final = _relations(
    "(near:Knowledge {namespace: $namespace, node_id: node_id})-[r]->(far:Knowledge)"
)
# Walked against their direction, types in $forward_only are skipped (a citation says the
# citing text needs the cited one, not the reverse).
GRAPH_RELATIONS_IN: Final = _relations(
    "(near:Knowledge {namespace: $namespace, node_id: node_id})<-[r]-(far:Knowledge)",
    " AND NOT type(r) IN $forward_only",
)

GRAPH_STATING_CHUNKS: Final = f"""
MATCH (c:Chunk {{namespace: $namespace}})
WHERE c.chunk_id IN $ids AND {CHUNK_VISIBLE}
MATCH (d:Document)-[:HAS_CHUNK]->(c)
RETURN c.chunk_id AS chunk_id, c.seq AS row, d.is_latest AS is_latest
"""

# Visible nodes named by one of $keys (through a visible declaration of the key), in one
# statement (one round trip), each with its capped count of visible relations with a visible
# other end plus visible chunks that mention it.
LOOKUP_ENTITIES_WITH_COUNTS: Final = f"""
MATCH (name:Name {{namespace: $namespace}})
WHERE name.key IN $keys
MATCH (name)-[:NAMES]->(k:Knowledge)
WHERE {_node_visible("k")} AND {_key_visible("name.key", "k")}
WITH name.key AS key, k, k.node_id AS node_id, k.kind AS kind, {_shown_type("k")} AS node_type
ORDER BY key, node_id
LIMIT $limit
RETURN key, node_id, kind, node_type,
       size(COLLECT {{
           MATCH (k)-[r]->(far:Knowledge)
           WHERE {RELATION_VISIBLE} AND {_node_visible("far")}
           RETURN r LIMIT $cap
       }}) + size(COLLECT {{
           MATCH (k)<-[r]-(far:Knowledge)
           WHERE {RELATION_VISIBLE} AND {_node_visible("far")}
           RETURN r LIMIT $cap
       }}) + size(COLLECT {{
           MATCH (k)-[s:FROM_CHUNK {{link: 'MENTIONS'}}]->(c:Chunk)
           WHERE {CHUNK_VISIBLE}
           RETURN s LIMIT $cap
       }}) AS relation_count
ORDER BY key, node_id
"""

DESCRIBE_NODES: Final = f"""
MATCH (k:Knowledge {{namespace: $namespace}})
WHERE k.node_id IN $ids AND {_node_visible("k")}
RETURN k.node_id AS node_id, k.kind AS kind, {_shown_type("k")} AS node_type, k.name AS name,
       k.description AS description,
       NOT EXISTS {{
           MATCH (k)-[:FROM_CHUNK]->(:Chunk)<-[:HAS_CHUNK]-(hidden:Document)
           WHERE NOT any(s IN hidden.scopes WHERE s IN $scopes)
       }} AS fully_visible
ORDER BY node_id
"""


# --- text2cypher (read path) ------------------------------------------------------------------
# The guarded statement itself is generated; graphctx only prefixes it to ask the server how it
# classifies it (query type ``r`` = read only) without running it.
EXPLAIN_PREFIX: Final = "EXPLAIN\n"

# Typed relations the caller can see at least once: the schema shown to the Text2Cypher LLM.
VISIBLE_RELATION_TYPES: Final = f"""
CYPHER 25
CALL db.relationshipTypes() YIELD relationshipType
WITH relationshipType
WHERE NOT relationshipType IN ['HAS_CHUNK', 'FROM_CHUNK', 'NAMES']
  AND EXISTS {{
      MATCH (:Knowledge {{namespace: $namespace}})-[r:$(relationshipType)]->(:Knowledge)
      WHERE {RELATION_VISIBLE}
  }}
RETURN relationshipType AS relation_type
ORDER BY relation_type
LIMIT $limit
"""
