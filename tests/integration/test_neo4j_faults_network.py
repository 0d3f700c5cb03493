"""Deadlines hold when the network to Neo4j is slow, stalls or resets (a real TCP proxy).

A stalled socket never answers, so the server's transaction timeout cannot end the wait: the
client side must. These tests put ``TcpProxy`` between the store and the shared server.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, StageStatus
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import StoreUnavailableError
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.neo4j.store import PING_TIMEOUT_S
from graphctx.store.port import StageTimeout
from graphctx.testing.fixtures import make_document, paragraphs

pytestmark = pytest.mark.neo4j

DEADLINE_S = 0.3
# The store's client grace (0.25 s) plus scheduling slack on a loaded 2-core machine.
CLIENT_BOUND_S = DEADLINE_S + 0.25 + 0.25
PIPELINE_OVERHEAD_S = 0.75


@pytest.fixture
def proxied_store(
    neo4j_runner: asyncio.Runner, neo4j_server: Any, neo4j_proxy: Any
) -> Iterator[Neo4jGraphStore]:
    store = Neo4jGraphStore(
        f"bolt://{neo4j_proxy.address}", neo4j_server.auth, neo4j_server.database
    )
    neo4j_runner.run(store.open())
    yield store
    neo4j_runner.run(store.close())


@pytest.fixture
def namespace(neo4j_runner: asyncio.Runner, proxied_store: Neo4jGraphStore) -> str:
    name = "t" + uuid.uuid4().hex[:12]
    doc = make_document(name, "d", "kafka consumer lag runbook", {"eng"})
    neo4j_runner.run(proxied_store.write_document(doc, paragraphs(doc.text), "test"))
    return name


def _search(store: Neo4jGraphStore, namespace: str, deadline: float) -> Any:
    return store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, deadline)


def test_a_stalled_connection_ends_as_a_stage_timeout_and_the_store_recovers(
    neo4j_runner: asyncio.Runner, proxied_store: Neo4jGraphStore, neo4j_proxy: Any, namespace: str
) -> None:
    neo4j_proxy.stall()
    started = time.monotonic()
    with pytest.raises(StageTimeout):
        neo4j_runner.run(_search(proxied_store, namespace, started + DEADLINE_S))
    elapsed = time.monotonic() - started
    neo4j_proxy.resume()
    hits = neo4j_runner.run(_search(proxied_store, namespace, time.monotonic() + 10))
    assert elapsed < CLIENT_BOUND_S
    assert [h.chunk_id for h in hits] == ["d@1#0"]


def test_latency_past_the_deadline_times_out_on_the_client(
    neo4j_runner: asyncio.Runner, proxied_store: Neo4jGraphStore, neo4j_proxy: Any, namespace: str
) -> None:
    neo4j_proxy.latency_s = 0.5  # one round trip alone outlasts the deadline
    started = time.monotonic()
    with pytest.raises(StageTimeout):
        neo4j_runner.run(_search(proxied_store, namespace, started + DEADLINE_S))
    assert time.monotonic() - started < CLIENT_BOUND_S


def test_a_connection_reset_mid_query_is_a_retryable_store_error(
    neo4j_runner: asyncio.Runner, proxied_store: Neo4jGraphStore, neo4j_proxy: Any, namespace: str
) -> None:
    neo4j_proxy.latency_s = 0.3  # the query is in flight when the reset comes
    reset = threading.Timer(0.1, neo4j_proxy.reset_connections)
    reset.start()
    with pytest.raises(StoreUnavailableError) as caught:
        neo4j_runner.run(_search(proxied_store, namespace, time.monotonic() + 5))
    reset.join()
    neo4j_proxy.heal()
    hits = neo4j_runner.run(_search(proxied_store, namespace, time.monotonic() + 10))
    assert caught.value.retryable is True
    assert len(hits) == 1


def test_a_ping_through_a_stalled_network_reports_unavailable_within_its_bound(
    neo4j_runner: asyncio.Runner, proxied_store: Neo4jGraphStore, neo4j_proxy: Any
) -> None:
    neo4j_proxy.stall()
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        neo4j_runner.run(proxied_store.ping())
    elapsed = time.monotonic() - started
    assert caught.value.retryable is True
    assert PING_TIMEOUT_S <= elapsed < PING_TIMEOUT_S + 0.75


def test_a_stalled_store_gives_a_partial_bundle_naming_the_timed_out_stage_in_time(
    neo4j_server: Any, neo4j_proxy: Any, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    store = Neo4jGraphStore(
        f"bolt://{neo4j_proxy.address}", neo4j_server.auth, neo4j_server.database
    )
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    request = ContextRequest(
        query="kafka consumer lag",
        principal_id="p",
        allowed_scopes=["eng"],
        namespace=namespace,
        timeout_ms=800,
    )
    with provider.open():
        provider.retrieve(request)  # warm: the embedder is loaded off the clock
        neo4j_proxy.stall()
        started = time.monotonic()
        response = provider.retrieve(request)
        elapsed = time.monotonic() - started
        neo4j_proxy.resume()
    timed_out = [s.stage for s in response.manifest.stages if s.status is StageStatus.TIMED_OUT]
    assert elapsed < 0.8 + PIPELINE_OVERHEAD_S
    assert timed_out
    assert (response.manifest.partial, response.manifest.deadline_stage in timed_out) == (
        True,
        True,
    )
