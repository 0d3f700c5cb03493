"""Every Cypher statement graphctx sends to Neo4j, as parameterised constants.

Nothing here is built from caller input: values travel as ``$parameters``, relation types as
dynamic types (``$(row.relation_type)``), and index names are the constants below.

Graph layout (all nodes carry ``namespace``; nothing is shared across namespaces)::

    (:Namespace {name, embedder, dimension, chunk_seq, relation_seq})
    (:Document {namespace, document_id, version, version_seq, is_latest, scopes, acl_key, ...})
        -[:HAS_CHUNK]->
    (:Chunk {namespace, chunk_id, seq, ordinal, start_char, end_char, text, heading_path,
             embedding, terms, length, repeats, acl_key, acl_terms})
                                    embedding: a float32 array; repeats: the terms that
                                    occur more than once, with their counts
    (:ScopeSet {key, namespace, scopes, chunk_count, total_length})   one per distinct scope set
    (:Term {namespace, term, scope_sets, chunks, peaks, shortest})   per term, the scope sets
                                    holding it and how many of their chunks do (parallel
                                    lists: BM25's n(t)), with a bound on its count in one of
                                    them and on their shortest length (MaxScore's bounds)
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
TERM_COUNT_CONSTRAINT: Final = "graphctx_term_count_key"  # the (:TermCount) layout before Term
TERM_CONSTRAINT: Final = "graphctx_term_key"

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
    TERM_CONSTRAINT: """CREATE CONSTRAINT graphctx_term_key IF NOT EXISTS
       FOR (t:Term) REQUIRE (t.namespace, t.term) IS UNIQUE""",
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
# still missing) is refused rather than scored from partial counts. It writes the TermCount
# layout, which CONVERT_LEGACY_TERM_COUNTS then moves onto Term nodes. Auto-commit.
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

# A graph written with one (:TermCount {scope_set, term, chunks}) node per scope set and term
# (graphctx before Term, or the backfill above) gets its counts moved onto the Term nodes,
# scope set by scope set: each set's counts are appended and its TermCount nodes deleted in
# one transaction, so an interrupted conversion resumes where it stopped (init_schema runs
# it while any TermCount is left), and the read path refuses full text until none is.
# TermCount nodes of a scope set that no longer exists were never read: they are dropped.
# Auto-commit (session.run).
LEGACY_TERM_COUNTS_LEFT: Final = "MATCH (t:TermCount) RETURN count(t) > 0 AS left"
CONVERT_LEGACY_TERM_COUNTS: Final = (
    """
MATCH (s:ScopeSet)
WHERE EXISTS { MATCH (:TermCount {scope_set: s.key}) }
CALL (s) {
    MATCH (old:TermCount {scope_set: s.key})
    WITH s, old
    ORDER BY old.term
    MERGE (t:Term {namespace: s.namespace, term: old.term})
    ON CREATE SET t.scope_sets = [], t.chunks = []
    SET t.scope_sets = t.scope_sets + s.key, t.chunks = t.chunks + old.chunks
    DELETE old
} IN TRANSACTIONS OF 1 ROWS
""",
    """
MATCH (old:TermCount)
CALL (old) { DELETE old } IN TRANSACTIONS OF 10000 ROWS
""",
)

# A chunk written before ``repeats`` (text_statistics.term_repeats) gets it from its stored
# terms, by every init that finds one without (until then the read path counts such a chunk's
# terms in its stored terms: the same counts, slower). Auto-commit (session.run).
CHUNKS_WITHOUT_REPEATS: Final = """
RETURN EXISTS { MATCH (c:Chunk) WHERE c.repeats IS NULL } AS left
"""
BACKFILL_REPEATS: Final = """
MATCH (c:Chunk)
WHERE c.repeats IS NULL
CALL (c) {
    SET c.repeats = reduce(text = '', entry IN COLLECT {
        UNWIND split(c.terms, ' ') AS term
        WITH term
        WHERE term <> ''
        WITH term, count(*) AS occurrences
        WHERE occurrences > 1
        WITH term, occurrences
        ORDER BY term
        RETURN '  ' + term + ' ' + toString(occurrences)
    } | text + entry) + '  '
} IN TRANSACTIONS OF 1000 ROWS
"""

# A Term written before ``peaks`` / ``shortest`` (text_statistics) gets them from its
# holders, found through the full-text index (``terms:"term"``), counted as the read path
# counts them (``repeats``, so BACKFILL_REPEATS runs first) and grouped by scope set. The SET
# before the read takes the Term's write lock: a write holding it (its chunks not yet seen
# here) ends first, or comes after and adds its own chunks to what is set here. A Term whose
# scope set shows no holder (not expected) stays without them, on the plain bound.
# Auto-commit (session.run).
TERMS_WITHOUT_PEAKS: Final = """
RETURN EXISTS { MATCH (t:Term) WHERE t.peaks IS NULL } AS left
"""
BACKFILL_TERM_PEAKS: Final = (
    r"""
MATCH (t:Term)
WHERE t.peaks IS NULL
CALL (t) {
    SET t.peaks = [], t.shortest = []
    WITH t, '  ' + t.term + ' ' AS mark,
         'terms:"' + replace(replace(t.term, '\\', '\\\\'), '"', '\\"') + '"' AS lucene
    CALL (t, mark, lucene) {
        CALL db.index.fulltext.queryNodes('"""
    + FULLTEXT_INDEX
    + r"""', lucene)
        YIELD node
        WHERE node.namespace = t.namespace AND node.acl_key IN t.scope_sets
        WITH node.acl_key AS key, coalesce(node.length, 0) AS length,
             CASE WHEN node.repeats CONTAINS mark
                  THEN toInteger(split(split(node.repeats, mark)[1], ' ')[0]) ELSE 1 END AS count
        WITH key, max(count) AS peak, min(length) AS shortest
        RETURN collect(key) AS keys, collect(peak) AS peaks, collect(shortest) AS lengths
    }
    WITH t, keys, peaks, lengths,
         [key IN t.scope_sets | head([j IN range(0, size(keys) - 1) WHERE keys[j] = key])]
         AS at
    WITH t, CASE WHEN none(j IN at WHERE j IS NULL) THEN [j IN at | peaks[j]] END AS peaks,
         CASE WHEN none(j IN at WHERE j IS NULL) THEN [j IN at | lengths[j]] END AS lengths
    SET t.peaks = peaks, t.shortest = lengths
} IN TRANSACTIONS OF 500 ROWS
"""
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

LATEST_VERSIONS: Final = """
UNWIND $document_ids AS document_id
MATCH (d:Document {namespace: $namespace, document_id: document_id})
WHERE d.is_latest
RETURN document_id, d {.version, .version_seq, .content_hash, .metadata_hash, .scopes} AS latest
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
# A chunk row is ``{properties, embedding}``: the embedding is a float32 VECTOR parameter
# (Bolt 6: 4 bytes a coordinate, 9 in a list of floats), stored as a float32 array by
# setNodeVectorProperty (a VECTOR property needs the block store format, which Community
# lacks); Cypher reads it back as LIST<FLOAT> (the same values: they were float32 before).
CREATE_VERSIONS_WITH_CHUNKS: Final = """
CYPHER 25
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
    UNWIND row.chunks AS chunk
    CREATE (c:Chunk)
    SET c = chunk.properties
    CREATE (d)-[:HAS_CHUNK]->(c)
    WITH c, chunk
    CALL db.create.setNodeVectorProperty(c, 'embedding', chunk.embedding)
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

# One statement per batch: the deltas summed in Python, one row per term (sorted, so the
# Term locks are taken in one order): ``keys`` the scope sets whose count moves, ``delta``
# their change by key, ``peak`` / ``shortest`` the joining chunks' largest count of the term
# and shortest length by key. A Term keeps the scope sets holding it (count > 0), their
# counts, and, unless it was written before them (text_statistics), each set's largest count
# and shortest length so far: they only grow / shrink, so a chunk leaving keeps them bounds.
ADJUST_TERM_COUNTS: Final = """
UNWIND $terms AS row
MERGE (t:Term {namespace: $namespace, term: row.term})
ON CREATE SET t.scope_sets = [], t.chunks = [], t.peaks = [], t.shortest = []
WITH t, row, [key IN row.keys WHERE NOT key IN t.scope_sets] AS added
WITH t, t.scope_sets + added AS keys,
     [i IN range(0, size(t.scope_sets) - 1)
      | t.chunks[i] + coalesce(row.delta[t.scope_sets[i]], 0)]
     + [key IN added | row.delta[key]] AS counts,
     CASE WHEN t.peaks IS NOT NULL THEN
         [i IN range(0, size(t.scope_sets) - 1)
          | CASE WHEN coalesce(row.peak[t.scope_sets[i]], 0) > t.peaks[i]
                 THEN row.peak[t.scope_sets[i]] ELSE t.peaks[i] END]
         + [key IN added | coalesce(row.peak[key], 0)] END AS peaks,
     CASE WHEN t.peaks IS NOT NULL THEN
         [i IN range(0, size(t.scope_sets) - 1)
          | CASE WHEN coalesce(row.shortest[t.scope_sets[i]], t.shortest[i]) < t.shortest[i]
                 THEN row.shortest[t.scope_sets[i]] ELSE t.shortest[i] END]
         + [key IN added | coalesce(row.shortest[key], 0)] END AS shortest
WITH t, [i IN range(0, size(keys) - 1) WHERE counts[i] > 0 | keys[i]] AS keys,
     [count IN counts WHERE count > 0] AS counts,
     CASE WHEN peaks IS NOT NULL
          THEN [i IN range(0, size(keys) - 1) WHERE counts[i] > 0 | peaks[i]] END AS peaks,
     CASE WHEN peaks IS NOT NULL
          THEN [i IN range(0, size(keys) - 1) WHERE counts[i] > 0 | shortest[i]] END
     AS shortest
SET t.scope_sets = keys, t.chunks = counts, t.peaks = peaks, t.shortest = shortest
WITH t
WHERE size(t.chunks) = 0
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

# The vector hits' bodies, over the visible scope-set keys ``keys`` (a parameter here, a
# variable inside CANDIDATE_SEARCH): the same text in both statements.


# What a vector body returns of each hit ``c`` (its visible document ``d``).
HIT_COLUMNS: Final = "c.chunk_id AS chunk_id, score"


def vector_exact_body(keys: str, returns: str = HIT_COLUMNS) -> str:
    """Exact cosine over the pre-filtered visible set: 100% recall, cost grows with the set."""
    return f"""
MATCH (c:Chunk)
WHERE c.acl_key IN {keys}
WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
ORDER BY score DESC, c.chunk_id
LIMIT $limit
MATCH (d:Document)-[:HAS_CHUNK]->(c)
WHERE {VISIBLE}
RETURN {returns}
"""


def vector_in_index_body(keys: str, returns: str = HIT_COLUMNS) -> str:
    """HNSW search with the ACL filter inside the index: only visible chunks take a slot."""
    return f"""
MATCH (c:Chunk)
  SEARCH c IN (
    VECTOR INDEX {VECTOR_INDEX}
    FOR $vector
    WHERE c.acl_key IN {keys}
    LIMIT $candidates
  ) SCORE AS score
WITH c, score
ORDER BY score DESC, c.chunk_id
LIMIT $limit
MATCH (d:Document)-[:HAS_CHUNK]->(c)
WHERE {VISIBLE}
RETURN {returns}
"""


_HIT_ORDER: Final = "ORDER BY score DESC, chunk_id\n"
VECTOR_SEARCH_EXACT: Final = vector_exact_body("$keys") + _HIT_ORDER
VECTOR_SEARCH_IN_INDEX: Final = "CYPHER 25" + vector_in_index_body("$keys") + _HIT_ORDER

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


def view_map(chunk: str) -> str:
    """The view of chunk ``chunk`` (of document ``d``) as a map, for statements that return
    views inside a larger row."""
    fields = (
        (name, chunk + expr[1:] if expr.startswith("c.") else expr) for name, expr in _VIEW_FIELDS
    )
    return "{" + ", ".join(f"{name}: {expr}" for name, expr in fields) + "}"


VIEW_MAP: Final = view_map("c")


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
