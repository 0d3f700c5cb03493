"""The output gate on Neo4j is its own read at the end, and a hybrid retrieval takes two round
trips: the candidate statement and the gate's."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.records import DocumentDates, NewChunk, NewDocument
from graphctx_lab.bench.on_neo4j.round_trips import TurnCounter

pytestmark = pytest.mark.neo4j

TEXT = "kafka broker notes for the on-call engineer"


def document(namespace: str, scopes: frozenset[str]) -> NewDocument:
    digest = hashlib.sha256(TEXT.encode()).hexdigest()
    return NewDocument(
        namespace=namespace,
        document_id="d0",
        source_uri="test://d0",
        scopes=scopes,
        source_version=None,
        title=None,
        media_type="text",
        text=TEXT,
        dates=DocumentDates(updated_at=datetime(2026, 1, 1, tzinfo=UTC)),
        declared_superseded_by=None,
        content_hash=digest,
        metadata_hash=digest,
    )


def request(namespace: str) -> ContextRequest:
    return ContextRequest(
        query="kafka broker",
        principal_id="p",
        allowed_scopes=["eng"],
        namespace=namespace,
        retrieval_mode=RetrievalMode.HYBRID,
        timeout_ms=120_000,  # a loaded machine's first re-scope write runs inside the gate's window
    )


@pytest.fixture
def counted(
    neo4j_runner: asyncio.Runner, neo4j_server: Any, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[tuple[ContextProvider, TurnCounter, str]]:
    """A provider whose store talks to the server through a round-trip counting relay, and a
    namespace holding one ``eng`` document."""
    relay = TurnCounter("127.0.0.1", int(neo4j_server.bolt_port))
    neo4j_runner.run(relay.__aenter__())
    store = Neo4jGraphStore(
        f"bolt://127.0.0.1:{relay.port}", neo4j_server.auth, neo4j_server.database
    )
    neo4j_runner.run(store.open())
    namespace = "g" + uuid.uuid4().hex[:12]
    chunk = NewChunk(0, 0, len(TEXT), TEXT, embedder.embed_documents([TEXT])[0])
    neo4j_runner.run(
        store.write_document(document(namespace, frozenset({"eng"})), [chunk], embedder.name)
    )
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    yield provider, relay, namespace
    neo4j_runner.run(store.close())
    neo4j_runner.run(relay.__aexit__())


def test_the_output_gate_on_neo4j_withholds_chunks_whose_scopes_changed_mid_request(
    neo4j_runner: asyncio.Runner,
    counted: tuple[ContextProvider, TurnCounter, str],
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    provider, _, namespace = counted
    store = provider.store
    original = store.fetch_chunks

    async def revoke_then_fetch(*args: Any, **kwargs: Any) -> Any:
        # On Neo4j the candidate statement read the chunk's view (visible); the first
        # fetch_chunks of a hybrid retrieval is the gate's: the document leaves "eng" first.
        revoked = document(namespace, frozenset({"hr"}))
        await store.write_document(revoked, [], embedder.name)
        return await original(*args, **kwargs)

    store.fetch_chunks = revoke_then_fetch  # type: ignore[method-assign]
    response = neo4j_runner.run(provider.aretrieve(request(namespace)))
    assert (response.answerable, response.items) == (False, [])
    assert [(d.stage, d.count) for d in response.denied] == [("output_gate", 1)]


def test_a_hybrid_retrieval_on_neo4j_takes_two_round_trips(
    neo4j_runner: asyncio.Runner, counted: tuple[ContextProvider, TurnCounter, str]
) -> None:
    provider, relay, namespace = counted
    first = neo4j_runner.run(provider.aretrieve(request(namespace)))  # checks the embedder once
    before = relay.turns
    again = neo4j_runner.run(provider.aretrieve(request(namespace)))
    assert relay.turns - before == 2  # the candidate statement, the output gate
    assert [i.chunk_id for i in again.items] == [i.chunk_id for i in first.items] != []
