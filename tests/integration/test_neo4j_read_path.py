"""The Neo4j read path is read-only and deadline-bound; the write path is separate."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import neo4j.exceptions
import pytest

from graphctx.errors import InvalidRequestError, StoreUnavailableError
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.port import StageTimeout
from graphctx.testing.fixtures import make_document, paragraphs

pytestmark = pytest.mark.neo4j

SOON_S = 30.0
COUNT_EVERYTHING = """
MATCH (n) WITH count(n) AS nodes
OPTIONAL MATCH ()-[r]->() WITH nodes, count(r) AS relationships
CALL db.labels() YIELD label WITH nodes, relationships, collect(label) AS labels
RETURN nodes, relationships, labels,
       COUNT { MATCH (c:Chunk {namespace: $namespace}) WHERE c.text = 'kafka' } AS kafka
"""
WRITES = {
    "create": "CREATE (:Intruder {at: timestamp()}) RETURN 1",
    "merge": "MERGE (i:Intruder {name: 'x'}) RETURN i",
    "set": "MATCH (c:Chunk {namespace: $namespace}) SET c.text = 'owned' RETURN count(c)",
    "delete": "MATCH (c:Chunk {namespace: $namespace}) DETACH DELETE c RETURN 1",
    "schema": "CREATE INDEX intruder_index IF NOT EXISTS FOR (i:Intruder) ON (i.name)",
    "subquery": "CALL () { CREATE (:Intruder) } RETURN 1",
}


SLOW = "UNWIND range(1, 2000000000) AS x RETURN sum(x) AS total"


def soon() -> float:
    return time.monotonic() + SOON_S


@pytest.mark.parametrize("statement", WRITES.values(), ids=WRITES.keys())
def test_the_server_rejects_a_write_sent_through_the_retrieval_path(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore, statement: str
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    doc = make_document(namespace, "d", "kafka", {"eng"})
    neo4j_runner.run(neo4j_store.write_document(doc, paragraphs(doc.text), "test"))
    params = {"namespace": namespace}
    before = neo4j_runner.run(neo4j_store.run_read(COUNT_EVERYTHING, params, soon()))
    with pytest.raises(InvalidRequestError) as caught:
        neo4j_runner.run(neo4j_store.run_read(statement, params, soon()))
    after = neo4j_runner.run(neo4j_store.run_read(COUNT_EVERYTHING, params, soon()))
    cause = caught.value.__cause__
    assert isinstance(cause, neo4j.exceptions.ClientError)
    assert (caught.value.code, cause.code) == (
        "read_only_violation",
        "Neo.ClientError.Statement.AccessMode",
    )
    assert (after, before[0]["kafka"]) == (before, 1)


def test_the_server_stops_a_read_transaction_at_its_timeout(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    neo4j_store.client_grace_s = 10.0  # let the server's own timeout fire first
    with pytest.raises(StageTimeout) as caught:
        neo4j_runner.run(neo4j_store.run_read(SLOW, {}, time.monotonic() + 0.3))
    cause = caught.value.__cause__
    assert isinstance(cause, neo4j.exceptions.ClientError)
    assert cause.code.startswith("Neo.ClientError.Transaction.TransactionTimedOut")


def test_the_client_stops_waiting_shortly_after_the_deadline(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    started = time.monotonic()
    with pytest.raises(StageTimeout):
        neo4j_runner.run(neo4j_store.run_read(SLOW, {}, started + 0.3))
    elapsed = time.monotonic() - started
    neo4j_runner.run(neo4j_store.ping())  # the store is still usable
    assert elapsed < 0.3 + neo4j_store.client_grace_s + 0.5


def test_a_search_past_its_deadline_never_reaches_the_server(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    with pytest.raises(StageTimeout):
        neo4j_runner.run(
            neo4j_store.vector_search(
                "nowhere",
                paragraphs("x")[0].embedding,
                frozenset({"eng"}),
                5,
                time.monotonic() - 0.001,
            )
        )


def test_writes_use_their_own_credentials(neo4j_runner: asyncio.Runner, neo4j_server: Any) -> None:
    store = Neo4jGraphStore(
        neo4j_server.uri,
        neo4j_server.auth,
        neo4j_server.database,
        write_auth=(neo4j_server.user, "not-the-password"),
    )
    neo4j_runner.run(store.open())
    try:
        namespace = "t" + uuid.uuid4().hex[:12]
        hits = neo4j_runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, soon())
        )
        doc = make_document(namespace, "d", "kafka", {"eng"})
        with pytest.raises(StoreUnavailableError) as caught:
            neo4j_runner.run(store.write_document(doc, paragraphs(doc.text), "test"))
    finally:
        neo4j_runner.run(store.close())
    assert (hits, caught.value.retryable) == ([], False)


def test_a_wrong_password_fails_open_without_retry(
    neo4j_runner: asyncio.Runner, neo4j_server: Any
) -> None:
    store = Neo4jGraphStore(neo4j_server.uri, (neo4j_server.user, "wrong"), neo4j_server.database)
    with pytest.raises(StoreUnavailableError) as caught:
        neo4j_runner.run(store.open())
    assert caught.value.retryable is False


def test_an_unreachable_server_fails_open_as_retryable(neo4j_runner: asyncio.Runner) -> None:
    store = Neo4jGraphStore("bolt://127.0.0.1:9", ("neo4j", "x"))  # constructing does no I/O
    with pytest.raises(StoreUnavailableError) as caught:
        neo4j_runner.run(store.open())
    assert caught.value.retryable is True


def test_init_schema_is_idempotent_and_reports_the_indexes(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    neo4j_runner.run(neo4j_store.init_schema())
    again = neo4j_runner.run(neo4j_store.init_schema())
    assert again.created == ()
    assert {"graphctx_chunk_embedding", "graphctx_chunk_text"} <= set(again.indexes)
    assert again.server_version.startswith("20")
