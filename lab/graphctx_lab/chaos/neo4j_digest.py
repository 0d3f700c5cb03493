"""What a namespace holds on Neo4j, read with read-only Cypher: a canonical digest and an audit.

The **digest** is a SHA-256 over everything an ingest decides (documents and their versions,
chunks with spans, text, terms and embeddings, scope-set counts, the namespace's embedder and
chunk sequence) and nothing it does not (``ingested_at``; values derived from the namespace
name, which differs between the namespaces compared). Two ingests of the same corpus have the
same digest exactly when they left the same state.

The **audit** checks that every document present is whole: all its chunks, each chunk's
vector-index and full-text-index rows, its scope-set count and the namespace's chunk
sequence. A document half-written by a killed transaction would fail it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

import neo4j

from graphctx.store.neo4j import acl, queries

__all__ = ["audit_namespace", "namespace_digest"]

DOCUMENTS: Final = """
MATCH (d:Document {namespace: $namespace})
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
WITH d, c ORDER BY c.ordinal
WITH d, collect(c {.chunk_id, .seq, .ordinal, .start_char, .end_char, .text, .heading_path,
                   .terms, .embedding, .acl_key, .acl_terms}) AS chunks
RETURN d {.document_id, .version, .version_seq, .is_latest, .content_hash, .metadata_hash,
          .scopes, .acl_key, .source_uri, .title, .text, .superseded_by_seq} AS document,
       chunks
ORDER BY document.document_id, document.version_seq
"""
SCOPE_SETS: Final = """
MATCH (s:ScopeSet {namespace: $namespace})
RETURN s.key AS key, s.scopes AS scopes, s.chunk_count AS chunk_count
ORDER BY key
"""
NAMESPACE: Final = """
MATCH (n:Namespace {name: $namespace})
RETURN n.embedder AS embedder, n.dimension AS dimension, n.chunk_seq AS chunk_seq
"""
# A chunk's own embedding, searched inside the index among its scope set, must find it.
VECTOR_ROW: Final = f"""
CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (VECTOR INDEX {queries.VECTOR_INDEX} FOR $vector WHERE c.acl_key = $key LIMIT 10)
  SCORE AS score
RETURN collect(c.chunk_id) AS found
"""
FULLTEXT_ROWS: Final = f"""
CALL db.index.fulltext.queryNodes('{queries.FULLTEXT_INDEX}', $lucene, {{limit: 100000}})
YIELD node
WHERE node.namespace = $namespace
RETURN collect(node.chunk_id) AS found
"""
EMBEDDING_DIGITS: Final = 6  # floats round-trip through Neo4j as float64; rounding is for JSON


def _read(driver: neo4j.Driver, database: str, query: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        query, params, database_=database, routing_=neo4j.RoutingControl.READ
    )
    return [record.data() for record in records]


def namespace_digest(driver: neo4j.Driver, database: str, namespace: str) -> str:
    """SHA-256 of the namespace's canonical content (see the module docstring)."""
    documents = []
    for row in _read(driver, database, DOCUMENTS, namespace=namespace):
        document = {k: v for k, v in row["document"].items() if k != "acl_key"}
        chunks = [
            {
                **{k: v for k, v in chunk.items() if k not in ("acl_key", "acl_terms")},
                "embedding": [round(x, EMBEDDING_DIGITS) for x in chunk["embedding"]],
            }
            for chunk in row["chunks"]
        ]
        documents.append({"document": document, "chunks": chunks})
    scope_sets = sorted(
        (sorted(row["scopes"]), row["chunk_count"])
        for row in _read(driver, database, SCOPE_SETS, namespace=namespace)
    )
    state = {
        "documents": documents,
        "scope_sets": scope_sets,
        "namespace": _read(driver, database, NAMESPACE, namespace=namespace),
    }
    canonical = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def audit_namespace(
    driver: neo4j.Driver, database: str, namespace: str, expected_chunks: Mapping[str, int]
) -> list[str]:
    """Problems that show a partial write (empty when every present document is whole).

    ``expected_chunks``: document id -> chunk count of an uninterrupted ingest.
    """
    problems: list[str] = []
    rows = _read(driver, database, DOCUMENTS, namespace=namespace)
    keys: Counter[str] = Counter()
    max_seq = 0
    for row in rows:
        document, chunks = row["document"], row["chunks"]
        name = f"{document['document_id']}@{document['version_seq']}"
        want = expected_chunks.get(document["document_id"])
        if want is None or len(chunks) != want:
            problems.append(f"{name}: {len(chunks)} chunks, an uninterrupted ingest has {want}")
        key = acl.scope_set_key(namespace, document["scopes"])
        terms = acl.acl_terms(namespace, document["scopes"])
        for chunk in chunks:
            keys[chunk["acl_key"]] += 1
            max_seq = max(max_seq, int(chunk["seq"]))
            if (chunk["acl_key"], chunk["acl_terms"]) != (key, terms) or not chunk["terms"]:
                problems.append(f"{chunk['chunk_id']}: filter properties are not the document's")
        problems += _index_problems(driver, database, namespace, name, key, terms, chunks)
    for row in _read(driver, database, SCOPE_SETS, namespace=namespace):
        if row["chunk_count"] != keys.pop(row["key"], 0):
            problems.append(f"scope set {row['scopes']}: count {row['chunk_count']} is wrong")
    problems += [
        f"{count} chunks have a scope set with no ScopeSet node" for count in keys.values()
    ]
    namespace_rows = _read(driver, database, NAMESPACE, namespace=namespace)
    if rows and (not namespace_rows or namespace_rows[0]["chunk_seq"] != max_seq):
        problems.append(f"namespace chunk_seq {namespace_rows} is not the last chunk's {max_seq}")
    return problems


def _index_problems(
    driver: neo4j.Driver,
    database: str,
    namespace: str,
    name: str,
    key: str,
    terms: str,
    chunks: list[dict[str, Any]],
) -> list[str]:
    """Every chunk is in the full-text index; the first one is found in the vector index."""
    if not chunks:
        return []
    lucene = f"+acl_terms:({' OR '.join(terms.split())}) +terms:({_any_terms(chunks)})"
    found = set(
        _read(driver, database, FULLTEXT_ROWS, lucene=lucene, namespace=namespace)[0]["found"]
    )
    problems = [
        f"{name}: {c['chunk_id']} has no full-text row"
        for c in chunks
        if c["chunk_id"] not in found
    ]
    first = chunks[0]
    hits = _read(driver, database, VECTOR_ROW, vector=first["embedding"], key=key)[0]["found"]
    if first["chunk_id"] not in hits:
        problems.append(f"{name}: {first['chunk_id']} has no vector row")
    return problems


def _any_terms(chunks: list[dict[str, Any]]) -> str:
    """One indexed term of each chunk, quoted for Lucene."""
    picked = {str(chunk["terms"]).split()[0] for chunk in chunks}
    return " OR ".join(
        '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in sorted(picked)
    )
