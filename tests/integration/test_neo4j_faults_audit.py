"""The partial-write audit and the digest the killed-ingest scenario relies on can fail."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from typing import Any

import neo4j
import pytest

from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.testing.fixtures import make_document, paragraphs
from graphctx_lab.chaos.neo4j_digest import audit_namespace, namespace_digest

pytestmark = pytest.mark.neo4j

TEXT = "first paragraph about kafka\n\nsecond paragraph about lag\n\nthird one"
DROP_LAST_CHUNK = """
MATCH (:Document {namespace: $namespace, document_id: 'd'})-[:HAS_CHUNK]->(c:Chunk)
WITH c ORDER BY c.ordinal DESC LIMIT 1
DETACH DELETE c
"""


def _write(runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str, text: str = TEXT) -> int:
    # The same source for every namespace: the digest compares content, not namespace names.
    doc = replace(make_document(namespace, "d", text, {"eng"}), source_uri="test://d")
    chunks = paragraphs(doc.text)
    runner.run(store.write_document(doc, chunks, "test"))
    return len(chunks)


def test_the_audit_reports_a_document_missing_a_chunk(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore, neo4j_server: Any
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    chunks = _write(neo4j_runner, neo4j_store, namespace)
    with neo4j.GraphDatabase.driver(neo4j_server.uri, auth=neo4j_server.auth) as driver:
        whole = audit_namespace(driver, neo4j_server.database, namespace, {"d": chunks})
        driver.execute_query(DROP_LAST_CHUNK, namespace=namespace, database_=neo4j_server.database)
        broken = audit_namespace(driver, neo4j_server.database, namespace, {"d": chunks})
    assert whole == []
    assert f"d@1: {chunks - 1} chunks, an uninterrupted ingest has {chunks}" in broken
    assert any(problem.startswith("scope set") for problem in broken)


def test_two_namespaces_with_the_same_writes_have_the_same_digest(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore, neo4j_server: Any
) -> None:
    first, second, other = ("t" + uuid.uuid4().hex[:12] for _ in range(3))
    for namespace in (first, second):
        _write(neo4j_runner, neo4j_store, namespace)
    _write(neo4j_runner, neo4j_store, other, TEXT.replace("third", "fourth"))
    with neo4j.GraphDatabase.driver(neo4j_server.uri, auth=neo4j_server.auth) as driver:
        digests = [
            namespace_digest(driver, neo4j_server.database, n) for n in (first, second, other)
        ]
    assert digests[0] == digests[1] != digests[2]
