"""Every Cypher statement graphctx sends to Neo4j, as parameterised constants.

Nothing here is built from caller input: values travel as ``$parameters``, relation types as
dynamic types (``$(row.relation_type)``), and index names are the constants below.

Graph layout (all nodes carry ``namespace``; nothing is shared across namespaces)::

    (:Namespace {name, embedder, dimension, chunk_seq, relation_seq})
    (:Document {namespace, document_id, version, version_seq, is_latest, scopes, acl_key, ...})
        -[:HAS_CHUNK]->
    (:Chunk {namespace, chunk_id, seq, ordinal, start_char, end_char, text, heading_path,
             embedding, terms, length, acl_key, acl_terms})
    (:ScopeSet {key, namespace, scopes, chunk_count, total_length})   one per distinct scope set
    (:TermCount {scope_set, term, chunks})   chunks of a scope set holding a term (BM25's n(t))
    (:Knowledge {namespace, node_id, kind, node_type, name, description})
        -[:FROM_CHUNK {link, role}]-> (:Chunk)
    (:Knowledge) -[:DECLARED]-> (:Declaration {namespace, declaration, keys, node_type, home})
        -[:THROUGH]-> (:Chunk)                       what one declaration said, through which chunks
    (:Name {namespace, key}) -[:NAMES]-> (:Knowledge)        entity lookup by name or alias
    (:Knowledge) -[:<RELATION_TYPE> {namespace, seq, support: [chunk_id, ...]}]-> (:Knowledge)
    (:PendingNode {namespace, node_id})   the end of a dangling relation: a node id no node
                                          has yet (or any more); never read, never walked
"""

from __future__ import annotations

from typing import Final

VECTOR_INDEX: Final = "graphctx_chunk_embedding"
FULLTEXT_INDEX: Final = "graphctx_chunk_text"
FULLTEXT_ANALYZER: Final = "whitespace"
DECLARATION_CONSTRAINT: Final = "graphctx_declaration_id"
TERM_COUNT_CONSTRAINT: Final = "graphctx_term_count_key"

# --- schema (write path, idempotent) ---------------------------------------------------------
# Name -> statement. The name is the index (or the constraint's index) it creates.
SCHEMA_STATEMENTS: Final[dict[str, str]] = {
    "graphctx_namespace_name": """CREATE CONSTRAINT graphctx_namespace_name IF NOT EXISTS
       FOR (n:Namespace) REQUIRE n.name IS UNIQUE""",
    "graphctx_document_version": """CREATE CONSTRAINT graphctx_document_version IF NOT EXISTS
       FOR (d:Document) REQUIRE (d.namespace, d.document_id, d.version_seq) IS UNIQUE""",
    "graphctx_chunk_id": """CREATE CONSTRAINT graphctx_chunk_id IF NOT EXISTS
       FOR (c:Chunk) REQUIRE (c.namespace, c.chunk_id) IS UNIQUE""",
    "graphctx_scope_set_key": """CREATE CONSTRAINT graphctx_scope_set_key IF NOT EXISTS
       FOR (s:ScopeSet) REQUIRE s.key IS UNIQUE""",
    "graphctx_knowledge_id": """CREATE CONSTRAINT graphctx_knowledge_id IF NOT EXISTS
       FOR (k:Knowledge) REQUIRE (k.namespace, k.node_id) IS UNIQUE""",
    "graphctx_document_by_id": """CREATE INDEX graphctx_document_by_id IF NOT EXISTS
       FOR (d:Document) ON (d.namespace, d.document_id)""",
    "graphctx_scope_set_by_namespace": """CREATE INDEX graphctx_scope_set_by_namespace IF NOT EXISTS
       FOR (s:ScopeSet) ON (s.namespace)""",
    "graphctx_chunk_by_acl_key": """CREATE INDEX graphctx_chunk_by_acl_key IF NOT EXISTS
       FOR (c:Chunk) ON (c.acl_key)""",
    "graphctx_chunk_by_seq": """CREATE INDEX graphctx_chunk_by_seq IF NOT EXISTS
       FOR (c:Chunk) ON (c.namespace, c.seq)""",
    "graphctx_pending_node_id": """CREATE CONSTRAINT graphctx_pending_node_id IF NOT EXISTS
       FOR (p:PendingNode) REQUIRE (p.namespace, p.node_id) IS UNIQUE""",
    "graphctx_name_key": """CREATE CONSTRAINT graphctx_name_key IF NOT EXISTS
       FOR (n:Name) REQUIRE (n.namespace, n.key) IS UNIQUE""",
    DECLARATION_CONSTRAINT: """CREATE CONSTRAINT graphctx_declaration_id IF NOT EXISTS
       FOR (d:Declaration) REQUIRE (d.namespace, d.declaration) IS UNIQUE""",
    TERM_COUNT_CONSTRAINT: """CREATE CONSTRAINT graphctx_term_count_key IF NOT EXISTS
       FOR (t:TermCount) REQUIRE (t.scope_set, t.term) IS UNIQUE""",
    "graphctx_knowledge_by_namespace": """CREATE INDEX graphctx_knowledge_by_namespace IF NOT EXISTS
       FOR (k:Knowledge) ON (k.namespace)""",
    # No `vector.dimensions`: one index serves every embedding dimension (a query only meets
    # vectors of its own dimension). Quantisation off: binary quantisation lost recall in our
    # measurements (README.md).
    "graphctx_chunk_embedding": """CYPHER 25
       CREATE VECTOR INDEX graphctx_chunk_embedding IF NOT EXISTS
       FOR (c:Chunk) ON c.embedding WITH [c.acl_key]
       OPTIONS {indexConfig: {
           `vector.similarity_function`: 'cosine',
           `vector.quantization.type`: 'NONE'
       }}""",
    "graphctx_chunk_text": """CREATE FULLTEXT INDEX graphctx_chunk_text IF NOT EXISTS
       FOR (c:Chunk) ON EACH [c.terms, c.acl_terms]
       OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}""",
}

AWAIT_INDEXES: Final = "CALL db.awaitIndexes($timeout_s)"

# Run once, when the declaration constraint is created: a graph written before declarations
# were recorded gets one per node, introducing all its keys and its type through all its
# support, as a home declaration (so any hidden supporting chunk hides them, as it hides the
# node's name). Auto-commit (session.run): it batches its own transactions.
BACKFILL_LEGACY_DECLARATIONS: Final = """
MATCH (k:Knowledge)
WHERE NOT (k)-[:DECLARED]->()
CALL (k) {
    MERGE (d:Declaration {namespace: k.namespace, declaration: 'legacy:' + k.node_id})
    SET d.keys = COLLECT { MATCH (name:Name)-[:NAMES]->(k) RETURN name.key },
        d.node_type = k.node_type, d.home = true
    MERGE (k)-[:DECLARED]->(d)
    WITH d
    MATCH (k)-[:FROM_CHUNK]->(c:Chunk)
    MERGE (d)-[:THROUGH]->(c)
} IN TRANSACTIONS OF 1000 ROWS
"""

# Run once, when the term-count constraint is created: a graph written before the write-time
# full-text statistics (graphctx.store.neo4j.text_statistics) gets them from its chunks. The
# scope sets' total_length is set last, so a read of a half-migrated graph (a total_length
# still missing) is refused rather than scored from partial counts. Auto-commit (session.run).
BACKFILL_TEXT_STATISTICS: Final = (
    """
MATCH (t:TermCount)
CALL (t) { DELETE t } IN TRANSACTIONS OF 10000 ROWS
""",
    """
MATCH (c:Chunk)
CALL (c) {
    SET c.length = size(split(c.terms, ' '))
    WITH c
    UNWIND split(c.terms, ' ') AS term
    WITH DISTINCT c, term
    WHERE term <> ''
    MERGE (t:TermCount {scope_set: c.acl_key, term: term})
    ON CREATE SET t.chunks = 0
    SET t.chunks = t.chunks + 1
} IN TRANSACTIONS OF 200 ROWS
""",
    """
MATCH (s:ScopeSet)
CALL (s) {
    SET s.total_length = reduce(
        total = 0, length IN COLLECT { MATCH (c:Chunk {acl_key: s.key}) RETURN c.length }
        | total + length)
} IN TRANSACTIONS OF 1000 ROWS
""",
)

SHOW_GRAPHCTX_INDEXES: Final = """
SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options, state
WHERE name STARTS WITH 'graphctx_'
RETURN name, type, labelsOrTypes, properties, options, state
"""

SERVER_COMPONENTS: Final = """
CALL dbms.components() YIELD name, versions, edition
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version, edition
"""

PING: Final = "RETURN 1 AS ok"

# --- write path: documents ------------------------------------------------------------------
# Locks the namespace (serialising its writers) and returns, per document id of a batch (ids
# distinct), what a write needs to decide: the namespace's embedder and last chunk seq, the
# latest version, the chunks of all versions by scope set, and the scopes of older versions.
BEGIN_DOCUMENTS_WRITE: Final = """
MERGE (n:Namespace {name: $namespace})
SET n.writes = coalesce(n.writes, 0) + 1
WITH n
UNWIND $document_ids AS document_id
RETURN document_id, n.embedder AS embedder, n.dimension AS dimension,
       coalesce(n.chunk_seq, 0) AS chunk_seq,
       head(COLLECT {
           MATCH (latest:Document {namespace: $namespace, document_id: document_id})
           WHERE latest.is_latest
           RETURN latest {.version, .version_seq, .content_hash, .metadata_hash, .scopes}
       }) AS latest,
       COLLECT {
           MATCH (:Document {namespace: $namespace, document_id: document_id})
                 -[:HAS_CHUNK]->(c:Chunk)
           WITH c.acl_key AS key, count(c) AS chunks
           RETURN {key: key, chunks: chunks}
       } AS footprint,
       COLLECT {
           MATCH (older:Document {namespace: $namespace, document_id: document_id})
           WHERE NOT older.is_latest
           RETURN older {.scopes}
       } AS older_scopes
"""

SET_NAMESPACE_EMBEDDER: Final = """
MATCH (n:Namespace {name: $namespace})
SET n.embedder = $embedder, n.dimension = $dimension
"""

NAMESPACE_EMBEDDER: Final = """
MATCH (n:Namespace {name: $namespace})
RETURN n.embedder AS embedder, n.dimension AS dimension
"""

LATEST_VERSION: Final = """
MATCH (d:Document {namespace: $namespace, document_id: $document_id})
WHERE d.is_latest
RETURN d {.version, .version_seq, .content_hash, .metadata_hash, .scopes} AS latest
"""

SET_SCOPES_OF_ALL_VERSIONS: Final = """
UNWIND $documents AS row
MATCH (d:Document {namespace: $namespace, document_id: row.document_id})
SET d.scopes = row.scopes, d.acl_key = row.acl_key
WITH d, row
MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
SET c.acl_key = row.acl_key, c.acl_terms = row.acl_terms
"""

# New versions with their chunks, one row per version (``$documents``: distinct document ids,
# each ``{properties, chunks}``): the previous latest version is demoted, the version and its
# chunks created. Chunks and relations carry a per-namespace ``seq`` (insertion order, for
# tie-breaks); the namespace node holds the last one handed out ($chunk_count more here).
CREATE_VERSIONS_WITH_CHUNKS: Final = """
MATCH (n:Namespace {name: $namespace})
SET n.chunk_seq = coalesce(n.chunk_seq, 0) + $chunk_count
WITH n
UNWIND $documents AS row
OPTIONAL MATCH (previous:Document {namespace: $namespace,
                                   document_id: row.properties.document_id})
WHERE previous.is_latest
SET previous.is_latest = false, previous.superseded_by_seq = row.properties.version_seq
CREATE (d:Document)
SET d = row.properties
WITH d, row
CALL (d, row) {
    UNWIND row.chunks AS properties
    CREATE (c:Chunk)
    SET c = properties
    CREATE (d)-[:HAS_CHUNK]->(c)
}
"""

# Chunk counts per scope set let vector search choose exact or in-index search cheaply; they,
# the total lengths and the term counts are visible BM25's statistics (text_statistics.py).
ADJUST_SCOPE_SETS: Final = """
UNWIND $deltas AS delta
MERGE (s:ScopeSet {key: delta.key})
ON CREATE SET s.namespace = $namespace, s.scopes = delta.scopes, s.chunk_count = 0,
              s.total_length = 0
SET s.chunk_count = s.chunk_count + delta.chunks,
    s.total_length = s.total_length + delta.length
WITH s
WHERE s.chunk_count <= 0
DELETE s
"""

# One statement per batch: the (scope set, term) deltas summed in Python.
ADJUST_TERM_COUNTS: Final = """
UNWIND $counts AS row
MERGE (t:TermCount {scope_set: row.key, term: row.term})
ON CREATE SET t.chunks = 0
SET t.chunks = t.chunks + row.chunks
WITH t
WHERE t.chunks <= 0
DELETE t
"""

# Chunks of the batch's re-scoped documents (all versions) that leave their scope set, read
# before the re-scope: their terms move to the new set's statistics.
MOVING_CHUNK_TERMS: Final = """
UNWIND $documents AS row
MATCH (:Document {namespace: $namespace, document_id: row.document_id})-[:HAS_CHUNK]->(c:Chunk)
WHERE c.acl_key <> row.acl_key
RETURN c.acl_key AS key, row.acl_key AS new_key, c.terms AS terms
"""

# --- write path: delete and graph -----------------------------------------------------------
LOCK_EXISTING_NAMESPACE: Final = """
MATCH (n:Namespace {name: $namespace})
SET n.writes = coalesce(n.writes, 0) + 1
RETURN coalesce(n.relation_seq, 0) AS relation_seq
"""

RESERVE_RELATION_SEQ: Final = """
MATCH (n:Namespace {name: $namespace})
SET n.relation_seq = coalesce(n.relation_seq, 0) + $count
"""

# ``homed_ids``: nodes with a home link (anything but a mention) to the document's chunks.
DOCUMENT_FOOTPRINT: Final = """
MATCH (d:Document {namespace: $namespace, document_id: $document_id})
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (k:Knowledge)-[f:FROM_CHUNK]->(c)
OPTIONAL MATCH (decl:Declaration)-[:THROUGH]->(c)
WITH count(DISTINCT d) AS versions, collect(DISTINCT c) AS chunks,
     collect(DISTINCT k.node_id) AS node_ids,
     collect(DISTINCT CASE WHEN f.link <> 'MENTIONS' THEN k.node_id END) AS homed_ids,
     collect(DISTINCT decl.declaration) AS declarations
RETURN versions, node_ids, homed_ids, declarations, [c IN chunks | c.chunk_id] AS chunk_ids,
       [c IN chunks | c.acl_key] AS chunk_keys, [c IN chunks | c.terms] AS chunk_terms
"""

DELETE_DOCUMENT_VERSIONS: Final = """
MATCH (d:Document {namespace: $namespace, document_id: $document_id})
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
DETACH DELETE c, d
"""

PRUNE_RELATION_SUPPORT: Final = """
MATCH (:Knowledge|PendingNode {namespace: $namespace})-[r]->(:Knowledge|PendingNode)
WHERE any(chunk_id IN r.support WHERE chunk_id IN $chunk_ids)
SET r.support = [chunk_id IN r.support WHERE NOT chunk_id IN $chunk_ids]
WITH r
WHERE size(r.support) = 0
DELETE r
"""

# A node whose every home link was in the deleted document goes with it: mentions elsewhere
# point at it, they do not make it.
DROP_MENTIONS_OF_HOMELESS_NODES: Final = """
UNWIND $node_ids AS node_id
MATCH (k:Knowledge {namespace: $namespace, node_id: node_id})
WHERE NOT EXISTS { MATCH (k)-[home:FROM_CHUNK]->() WHERE home.link <> 'MENTIONS' }
MATCH (k)-[mention:FROM_CHUNK]->()
DELETE mention
"""

DROP_NAMES_OF_UNSUPPORTED_NODES: Final = """
UNWIND $node_ids AS node_id
MATCH (k:Knowledge {namespace: $namespace, node_id: node_id})
WHERE NOT (k)-[:FROM_CHUNK]->(:Chunk)
MATCH (name:Name)-[link:NAMES]->(k)
DELETE link
WITH DISTINCT name
WHERE NOT (name)-[:NAMES]->()
DELETE name
"""

# A node left without support keeps no text. Relations still supported elsewhere stay, as on
# the embedded store, with a pending end that is walked again once a node with its id is
# written; a pending node that ends no relation is deleted.
RETIRE_UNSUPPORTED_NODES: Final = """
UNWIND $node_ids AS node_id
MATCH (k:Knowledge {namespace: $namespace, node_id: node_id})
WHERE NOT (k)-[:FROM_CHUNK]->(:Chunk)
REMOVE k:Knowledge, k.kind, k.name, k.description, k.node_type
SET k:PendingNode
"""

DELETE_LONE_PENDING_NODES: Final = """
MATCH (p:PendingNode {namespace: $namespace})
WHERE NOT (p)--()
DELETE p
"""

PROMOTE_PENDING_NODES: Final = """
UNWIND $node_ids AS node_id
MATCH (p:PendingNode {namespace: $namespace, node_id: node_id})
REMOVE p:PendingNode
SET p:Knowledge
"""

# Relation ends no node has yet: the relation is kept and waits (docs/graph-format.md).
CREATE_PENDING_ENDS: Final = """
UNWIND $node_ids AS node_id
WITH node_id
WHERE NOT EXISTS { MATCH (:Knowledge {namespace: $namespace, node_id: node_id}) }
MERGE (:PendingNode {namespace: $namespace, node_id: node_id})
"""

DELETE_UNSUPPORTED_DECLARATIONS: Final = """
UNWIND $declarations AS declaration
MATCH (d:Declaration {namespace: $namespace, declaration: declaration})
WHERE NOT (d)-[:THROUGH]->(:Chunk)
DETACH DELETE d
"""

MISSING_CHUNKS: Final = """
UNWIND $chunk_ids AS chunk_id
OPTIONAL MATCH (c:Chunk {namespace: $namespace, chunk_id: chunk_id})
WITH chunk_id, c
WHERE c IS NULL
RETURN collect(chunk_id) AS missing
"""

# Later writes keep an earlier description or type they do not restate, and a chunk first
# recorded as a mere mention is upgraded by a stronger link, never the reverse.
UPSERT_NODES: Final = """
UNWIND $nodes AS row
MERGE (k:Knowledge {namespace: $namespace, node_id: row.node_id})
SET k.kind = row.kind, k.name = row.name,
    k.description = coalesce(row.description, k.description),
    k.node_type = coalesce(row.node_type, k.node_type)
WITH k, row
CALL (k, row) {
    UNWIND row.name_keys AS key
    MERGE (name:Name {namespace: $namespace, key: key})
    MERGE (name)-[:NAMES]->(k)
}
CALL (k, row) {
    UNWIND row.support AS support
    MATCH (c:Chunk {namespace: $namespace, chunk_id: support.chunk_id})
    MERGE (k)-[s:FROM_CHUNK]->(c)
    ON CREATE SET s.link = row.link, s.role = support.role
    ON MATCH SET s.link = CASE WHEN s.link = 'MENTIONS' THEN row.link ELSE s.link END,
                 s.role = coalesce(support.role, s.role)
}
CALL (k, row) {
    MERGE (d:Declaration {namespace: $namespace, declaration: row.declaration})
    ON CREATE SET d.keys = row.name_keys, d.node_type = row.node_type, d.home = row.home
    MERGE (k)-[:DECLARED]->(d)
    WITH d
    UNWIND row.support AS support
    MATCH (c:Chunk {namespace: $namespace, chunk_id: support.chunk_id})
    MERGE (d)-[:THROUGH]->(c)
}
"""

UPSERT_RELATIONS: Final = """
CYPHER 25
UNWIND $relations AS row
MATCH (a:Knowledge|PendingNode {namespace: $namespace, node_id: row.source_id})
MATCH (b:Knowledge|PendingNode {namespace: $namespace, node_id: row.target_id})
MERGE (a)-[r:$(row.relation_type)]->(b)
ON CREATE SET r.namespace = $namespace, r.support = [], r.seq = row.seq
SET r.support = reduce(
    acc = r.support, chunk_id IN row.chunk_ids |
    CASE WHEN chunk_id IN acc THEN acc ELSE acc + chunk_id END
)
"""

# --- read path (always in READ transactions; scopes applied inside every query) -------------
VISIBLE: Final = "any(scope IN d.scopes WHERE scope IN $scopes)"

VECTOR_PLAN: Final = """
OPTIONAL MATCH (n:Namespace {name: $namespace})
OPTIONAL MATCH (s:ScopeSet {namespace: $namespace})
WHERE any(scope IN s.scopes WHERE scope IN $scopes)
RETURN n.dimension AS dimension, collect(s.key) AS keys, sum(s.chunk_count) AS visible
"""

# Exact cosine over the pre-filtered visible set: 100% recall, cost grows with the set.
VECTOR_SEARCH_EXACT: Final = f"""
MATCH (c:Chunk)
WHERE c.acl_key IN $keys
WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
ORDER BY score DESC, c.chunk_id
LIMIT $limit
MATCH (d:Document)-[:HAS_CHUNK]->(c)
WHERE {VISIBLE}
RETURN c.chunk_id AS chunk_id, score
ORDER BY score DESC, chunk_id
"""

# HNSW search with the ACL filter inside the index: only visible chunks take a slot.
VECTOR_SEARCH_IN_INDEX: Final = f"""
CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (
    VECTOR INDEX {VECTOR_INDEX}
    FOR $vector
    WHERE c.acl_key IN $keys
    LIMIT $candidates
  ) SCORE AS score
WITH c, score
ORDER BY score DESC, c.chunk_id
LIMIT $limit
MATCH (d:Document)-[:HAS_CHUNK]->(c)
WHERE {VISIBLE}
RETURN c.chunk_id AS chunk_id, score
ORDER BY score DESC, chunk_id
"""

# A chunk view's fields (name, expression), read the same way as columns and as a map.
_VIEW_FIELDS: Final = (
    ("chunk_id", "c.chunk_id"),
    ("document_id", "d.document_id"),
    ("version", "d.version"),
    ("source_uri", "d.source_uri"),
    ("title", "d.title"),
    ("text", "c.text"),
    ("start_char", "c.start_char"),
    ("end_char", "c.end_char"),
    ("ordinal", "c.ordinal"),
    ("scopes", "d.scopes"),
    ("created_at", "d.created_at"),
    ("updated_at", "d.updated_at"),
    ("valid_from", "d.valid_from"),
    ("valid_to", "d.valid_to"),
    ("is_latest", "d.is_latest"),
    ("declared_superseded_by", "d.declared_superseded_by"),
    ("extra_json", "d.extra_json"),
)

VIEW_COLUMNS: Final = ", ".join(f"{expr} AS {name}" for name, expr in _VIEW_FIELDS)

FETCH_CHUNKS: Final = f"""
MATCH (c:Chunk {{namespace: $namespace}})
WHERE c.chunk_id IN $chunk_ids
MATCH (d:Document)-[:HAS_CHUNK]->(c)
WHERE {VISIBLE}
RETURN {VIEW_COLUMNS}
"""

# The chunk view as a map, for statements that return views inside a larger row.
VIEW_MAP: Final = "{" + ", ".join(f"{name}: {expr}" for name, expr in _VIEW_FIELDS) + "}"


def _scored(node: str) -> str:
    """Rows ``node`` -> ``node, frequencies, score``: visible BM25 (graphctx.store.bm25) from
    the statistics in scope (``terms``, ``idf``, ``average_length``), term counts read in the
    stored terms."""
    return f"""
    WITH {node}, ' ' + replace({node}.terms, ' ', '  ') + ' ' AS spaced
    WITH {node}, [t IN terms |
        (size(spaced) - size(replace(spaced, ' ' + t + ' ', ''))) / (size(t) + 2)] AS frequencies
    WITH {node}, frequencies, $k1 * (1 - $b + $b * {node}.length / average_length) AS norm
    WITH {node}, frequencies, reduce(score = 0.0, i IN range(0, size(idf) - 1) |
        score + CASE WHEN frequencies[i] > 0
            THEN idf[i] * frequencies[i] * ($k1 + 1) / (frequencies[i] + norm)
            ELSE 0.0 END) AS score"""


# The full-text half of CANDIDATE_SEARCH (imports n, keys, visible, terms; adds pool_size,
# total_length, holding, unmigrated, lexical_top). Visible BM25 (graphctx.store.bm25) with
# the statistics it had when every visible match was scanned, found without scanning them:
# - n(t) is summed from the write-time TermCount nodes of the visible scope sets
#   (text_statistics.py); ``unmigrated`` counts visible sets written before those statistics;
# - the pool (visible chunks holding any query term) is counted with its total length from
#   ``Chunk.length`` alone, reading whichever side is smaller: the pool ($lucene), or its
#   complement among the visible chunks ($complement: the ACL clause minus every term), whose
#   count and length are taken from the scope sets' chunk_count and total_length;
# - the hits are the exact top $limit by MaxScore: Lucene's best $probe visible matches (its
#   index-wide ranking only chooses which rows are probed) give a threshold, the $limit-th
#   best visible score; a chunk holding only terms whose upper bounds (idf * (k1 + 1)) add up
#   to at most the threshold cannot reach the top $limit, so only the chunks holding a
#   remaining ("essential") term are scored, all of them (up to $pool, R4). Of those, the
#   $view_pool best leave the server and Python re-scores them exactly ($view_pool is a margin
#   over the limit for last-bit differences).
# Lucene is only asked for visible chunks ($acl, the +acl_terms clause), every row is checked
# against the visible scope sets (``acl_key``, written with the document's scopes), and the
# rows that leave the server against their document's scopes too. $terms and $quoted (the
# terms as Lucene phrases) are joined by spaces (terms hold none).
FULLTEXT_CALLS: Final = f"""
CALL (terms) {{
    OPTIONAL MATCH (s:ScopeSet {{namespace: $namespace}})
    WHERE $lucene IS NOT NULL AND any(scope IN s.scopes WHERE scope IN $scopes)
    WITH collect(s) AS sets
    WITH [s IN sets | s.key] AS text_keys,
         reduce(total = 0, s IN sets | total + s.chunk_count) AS text_visible,
         reduce(total = 0, s IN sets | total + coalesce(s.total_length, 0)) AS visible_length,
         size([s IN sets WHERE s.total_length IS NULL]) AS unmigrated
    RETURN text_keys, text_visible, visible_length, unmigrated,
           [t IN terms | reduce(held = 0, chunks IN COLLECT {{
               MATCH (x:TermCount) WHERE x.scope_set IN text_keys AND x.term = t
               RETURN x.chunks
           }} | held + chunks)] AS holding
}}
WITH n, keys, visible, terms, text_keys, text_visible, visible_length, unmigrated, holding,
     text_visible - reduce(most = 0, h IN holding | CASE WHEN h > most THEN h ELSE most END)
     < reduce(total = 0, h IN holding | total + h) AS complement
CALL (text_keys, text_visible, complement) {{
    WITH 1 AS one
    WHERE $lucene IS NOT NULL AND text_visible > 0
    CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}',
        CASE WHEN complement THEN $complement ELSE $lucene END, {{limit: text_visible}})
    YIELD node
    WHERE node.acl_key IN text_keys
    RETURN count(node) AS matched, sum(node.length) AS matched_length
}}
WITH n, keys, visible, terms, text_keys, unmigrated, holding,
     CASE WHEN complement THEN text_visible - matched ELSE matched END AS pool_size,
     CASE WHEN complement THEN visible_length - matched_length ELSE matched_length END
     AS total_length
WITH n, keys, visible, terms, text_keys, unmigrated, holding, pool_size, total_length,
     toFloat(total_length) / CASE pool_size WHEN 0 THEN 1 ELSE pool_size END AS average_length,
     [held IN holding | log((visible - held + 0.5) / (held + 0.5))] AS raw_idf
WITH n, keys, visible, terms, text_keys, unmigrated, holding, pool_size, total_length,
     CASE WHEN average_length < 1e-9 THEN 1e-9 ELSE average_length END AS average_length,
     [x IN raw_idf | CASE WHEN x < 1e-6 THEN 1e-6 ELSE x END] AS idf
CALL (terms, text_keys, idf, average_length) {{
    WITH $lucene AS lucene
    WHERE lucene IS NOT NULL
    CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', lucene, {{limit: $probe}})
    YIELD node
    WHERE node.acl_key IN text_keys{_scored("node")}
    WITH score
    ORDER BY score DESC
    LIMIT $limit
    RETURN collect(score) AS probed
}}
WITH n, keys, visible, terms, text_keys, unmigrated, holding, pool_size, total_length, idf,
     average_length,
     CASE WHEN size(probed) >= $limit THEN probed[$limit - 1] * (1 - 1e-9) ELSE 0.0 END
     AS threshold,
     [x IN idf | x * ($k1 + 1)] AS bound
WITH n, keys, visible, terms, text_keys, unmigrated, holding, pool_size, total_length, idf,
     average_length,
     [i IN range(0, size(bound) - 1) WHERE reduce(below = 0.0, j IN range(0, size(bound) - 1) |
         below + CASE WHEN bound[j] < bound[i] OR (bound[j] = bound[i] AND j <= i)
                      THEN bound[j] ELSE 0.0 END) > threshold] AS essential
CALL (terms, text_keys, idf, average_length, essential) {{
    WITH CASE $quoted WHEN '' THEN [] ELSE split($quoted, ' ') END AS quoted
    WITH $acl + ' +(' + reduce(q = '', i IN essential | q + ' ' + quoted[i]) + ')' AS lucene
    WHERE $lucene IS NOT NULL AND size(essential) > 0
    CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', lucene, {{limit: $pool}})
    YIELD node
    WHERE node.acl_key IN text_keys{_scored("node")}
    ORDER BY score DESC, node.chunk_id
    LIMIT $view_pool
    MATCH (d:Document)-[:HAS_CHUNK]->(node)
    WHERE node.namespace = $namespace AND {VISIBLE}
    RETURN collect({{chunk_id: node.chunk_id, length: node.length, frequencies: frequencies}})
           AS lexical_top
}}"""

# One retrieval's candidates in one statement (one round trip): the scope sets the caller
# sees (VECTOR_PLAN), the visible full-text hits (FULLTEXT_CALLS), of which only the pool's
# statistics and its $view_pool best by the same BM25 (graphctx.store.bm25) leave the server:
# Python re-scores those exactly,
# the vector hits with the ACL filter inside the index or the exact scan
# (VECTOR_SEARCH_IN_INDEX / VECTOR_SEARCH_EXACT, chosen by $strategy as the store does), and
# the scoped views (FETCH_CHUNKS) of the vector hits and of those best full-text matches
# ($view_pool is a margin over the limit, so a last-bit difference between Java's and Python's
# arithmetic cannot change which hits Python keeps). $lucene / $vector are null when that list
# is not asked for. $terms are the query terms joined by spaces (terms hold none): the server
# plans a statement again for each size class of a list parameter, a second or more here.
CANDIDATE_SEARCH: Final = f"""
CYPHER 25
OPTIONAL MATCH (n:Namespace {{name: $namespace}})
WITH n, CASE $terms WHEN '' THEN [] ELSE split($terms, ' ') END AS terms
CALL () {{
    OPTIONAL MATCH (s:ScopeSet {{namespace: $namespace}})
    WHERE any(scope IN s.scopes WHERE scope IN $scopes)
    RETURN collect(s.key) AS keys, coalesce(sum(s.chunk_count), 0) AS visible
}}
{FULLTEXT_CALLS}
CALL (n, keys, visible) {{
    CALL (n, keys, visible) {{
        WITH n, keys, visible
        WHERE $vector IS NOT NULL AND size(keys) > 0 AND n.dimension = size($vector)
          AND ($strategy = 'exact' OR ($strategy = 'auto' AND visible <= $exact_max))
        MATCH (c:Chunk)
        WHERE c.acl_key IN keys
        WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
        ORDER BY score DESC, c.chunk_id
        LIMIT $limit
        MATCH (d:Document)-[:HAS_CHUNK]->(c)
        WHERE {VISIBLE}
        RETURN c.chunk_id AS chunk_id, score
      UNION ALL
        WITH n, keys, visible
        WHERE $vector IS NOT NULL AND size(keys) > 0 AND n.dimension = size($vector)
          AND ($strategy = 'in_index' OR ($strategy = 'auto' AND visible > $exact_max))
        MATCH (c:Chunk)
          SEARCH c IN (
            VECTOR INDEX {VECTOR_INDEX}
            FOR $vector
            WHERE c.acl_key IN keys
            LIMIT $candidates
          ) SCORE AS score
        WITH c, score
        ORDER BY score DESC, c.chunk_id
        LIMIT $limit
        MATCH (d:Document)-[:HAS_CHUNK]->(c)
        WHERE {VISIBLE}
        RETURN c.chunk_id AS chunk_id, score
    }}
    RETURN collect({{chunk_id: chunk_id, score: score}}) AS vector_hits
}}
WITH n, keys, visible, pool_size, total_length, holding, unmigrated, lexical_top, vector_hits,
     [r IN lexical_top | r.chunk_id] + [h IN vector_hits | h.chunk_id] AS ids
CALL (ids) {{
    MATCH (c:Chunk {{namespace: $namespace}})
    WHERE c.chunk_id IN ids
    MATCH (d:Document)-[:HAS_CHUNK]->(c)
    WHERE {VISIBLE}
    RETURN collect({VIEW_MAP}) AS views
}}
RETURN n.dimension AS dimension, size(keys) > 0 AS any_visible_set, visible, pool_size,
       total_length, holding, unmigrated, lexical_top, vector_hits, views
"""

LIST_DOCUMENTS: Final = f"""
MATCH (d:Document {{namespace: $namespace}})
WHERE {VISIBLE}
RETURN d.document_id AS document_id, d.version AS version, d.source_uri AS source_uri,
       d.title AS title, COUNT {{ (d)-[:HAS_CHUNK]->(:Chunk) }} AS chunk_count,
       (NOT d.is_latest OR d.declared_superseded_by IS NOT NULL) AS superseded
ORDER BY document_id, d.version_seq
"""

NODES_FOR_CHUNKS: Final = f"""
MATCH (c:Chunk {{namespace: $namespace}})
WHERE c.chunk_id IN $chunk_ids
MATCH (d:Document)-[:HAS_CHUNK]->(c)
WHERE {VISIBLE}
MATCH (k:Knowledge {{namespace: $namespace}})-[:FROM_CHUNK]->(c)
RETURN k.node_id AS node_id, k.kind AS kind, c.chunk_id AS chunk_id
ORDER BY node_id, chunk_id
"""

DOCUMENT_CHUNKS: Final = f"""
MATCH (d:Document {{namespace: $namespace, document_id: $document_id}})
WHERE d.is_latest
MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
RETURN {VIEW_COLUMNS}
ORDER BY c.ordinal
"""

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
