"""The real server stopped and restarted under an open store: typed errors, then reconnection.

These tests own a dedicated server (``restartable_neo4j``) and stop it; each restart costs
10-40 s here, so the module restarts twice: once with SIGTERM, once with SIGKILL.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from graphctx.errors import StoreUnavailableError
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.records import WriteOutcome
from graphctx.testing.fixtures import make_document, paragraphs
from graphctx_lab.chaos.neo4j_digest import audit_namespace

pytestmark = pytest.mark.neo4j

FAST_FAILURE_S = 1.0  # a refused connection must not wait for any driver default
WRITE_RETRY_S = 1.0


@pytest.fixture
def store(neo4j_runner: asyncio.Runner, restartable_neo4j: Any) -> Iterator[Neo4jGraphStore]:
    if not restartable_neo4j.running:
        restartable_neo4j.start()  # a failed test must not leave the next one without a server
    store = Neo4jGraphStore(
        restartable_neo4j.routing_uri,
        restartable_neo4j.auth,
        restartable_neo4j.database,
        write_retry_s=WRITE_RETRY_S,
    )
    neo4j_runner.run(store.open())
    yield store
    neo4j_runner.run(store.close())


def _fails_with(runner: asyncio.Runner, work: Any) -> tuple[StoreUnavailableError, float]:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        runner.run(work)
    return caught.value, time.monotonic() - started


def test_a_stopped_server_fails_reads_fast_and_retryable_and_the_same_store_recovers(
    neo4j_runner: asyncio.Runner, restartable_neo4j: Any, store: Neo4jGraphStore
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    doc = make_document(namespace, "d", "kafka consumer lag runbook", {"eng"})
    neo4j_runner.run(store.write_document(doc, paragraphs(doc.text), "test"))
    restartable_neo4j.stop()
    deadline = time.monotonic() + 10.0  # a generous deadline: failing fast must not need it
    search = store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, deadline)
    search_error, search_s = _fails_with(neo4j_runner, search)
    ping_error, ping_s = _fails_with(neo4j_runner, store.ping())
    reopened = Neo4jGraphStore(restartable_neo4j.routing_uri, restartable_neo4j.auth)
    open_error, open_s = _fails_with(neo4j_runner, reopened.open())
    restartable_neo4j.start()
    hits = neo4j_runner.run(
        store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, time.monotonic() + 10)
    )
    neo4j_runner.run(store.ping())
    assert [e.retryable for e in (search_error, ping_error, open_error)] == [True, True, True]
    assert max(search_s, ping_s, open_s) < FAST_FAILURE_S
    assert [h.chunk_id for h in hits] == [f"d@1#{c.ordinal}" for c in paragraphs(doc.text)]


def test_a_killed_server_keeps_every_committed_document_whole(
    neo4j_runner: asyncio.Runner, restartable_neo4j: Any, store: Neo4jGraphStore
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    written = make_document(namespace, "kept", "first paragraph\n\nsecond paragraph", {"eng"})
    neo4j_runner.run(store.write_document(written, paragraphs(written.text), "test"))
    restartable_neo4j.stop(kill=True)
    lost = make_document(namespace, "lost", "never committed", {"eng"})
    write_error, write_s = _fails_with(
        neo4j_runner, store.write_document(lost, paragraphs(lost.text), "test")
    )
    restartable_neo4j.start()
    expected = {"kept": len(paragraphs(written.text)), "lost": len(paragraphs(lost.text))}
    with restartable_neo4j.driver() as driver:
        problems = audit_namespace(driver, restartable_neo4j.database, namespace, expected)
    retried = neo4j_runner.run(store.write_document(lost, paragraphs(lost.text), "test"))
    again = neo4j_runner.run(store.write_document(written, paragraphs(written.text), "test"))
    assert write_error.retryable is True
    assert write_s < WRITE_RETRY_S + 5.0  # the driver's retries are bounded by write_retry_s
    assert problems == []
    assert (retried.outcome, again.outcome) == (WriteOutcome.ADDED, WriteOutcome.UNCHANGED)
