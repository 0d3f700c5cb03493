"""Chunk embeddings on Neo4j: written as float32 arrays (``db.create.setNodeVectorProperty``
from a float32 Vector parameter), read as LIST<FLOAT>. A graph written before, with float64
lists, needs no migration: both layouts hold the same values, the index and the exact scan
read them the same, and one graph may hold both."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.neo4j.store import VectorStrategy
from graphctx.store.records import DocumentWrite, NewChunk
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs, unit_vector

pytestmark = pytest.mark.neo4j

TEXTS = {
    "a": "kafka brokers\n\nconsumer lag",
    "b": "payment service\n\ncard tokens\n\nrefunds",
    "c": "vault secrets rotate",
}
SCOPES = frozenset({"eng"})
AS_FLOAT64_LISTS = """
MATCH (c:Chunk {namespace: $namespace})
SET c.embedding = [x IN c.embedding | toFloat(x)]
"""
EMBEDDINGS = """
MATCH (c:Chunk {namespace: $namespace})
RETURN c.chunk_id AS chunk_id, c.embedding AS embedding
"""


@pytest.fixture
def stores(
    neo4j_runner: asyncio.Runner, neo4j_server: Any
) -> Iterator[dict[VectorStrategy, Neo4jGraphStore]]:
    """One store per vector strategy (the exact scan and the in-index search)."""
    opened = {}
    for strategy in (VectorStrategy.EXACT, VectorStrategy.IN_INDEX):
        store = Neo4jGraphStore(
            neo4j_server.uri, neo4j_server.auth, neo4j_server.database, vector_strategy=strategy
        )
        neo4j_runner.run(store.open())
        opened[strategy] = store
    yield opened
    for store in opened.values():
        neo4j_runner.run(store.close())


def hits(
    runner: asyncio.Runner, stores: dict[VectorStrategy, Neo4jGraphStore], namespace: str
) -> dict[tuple[VectorStrategy, str], list[tuple[str, float]]]:
    found = {}
    for strategy, store in stores.items():
        for seed in ("consumer lag", "card tokens", TEXTS["c"]):
            got = runner.run(
                store.vector_search(namespace, unit_vector(seed), SCOPES, 10, far_deadline())
            )
            found[(strategy, seed)] = [(h.chunk_id, h.score) for h in got]
    return found


async def run_write(store: Neo4jGraphStore, statement: str, namespace: str) -> list[Any]:
    writer = store._require(store._writer)
    async with writer.session(database=store.database) as session:
        return [r.data() async for r in await session.run(statement, namespace=namespace)]


def test_a_graph_with_float64_list_embeddings_reads_the_same_hits_and_scores(
    neo4j_runner: asyncio.Runner, stores: dict[VectorStrategy, Neo4jGraphStore]
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    store = stores[VectorStrategy.EXACT]
    for doc_id in ("a", "b"):
        document = make_document(namespace, doc_id, TEXTS[doc_id], {"eng"})
        neo4j_runner.run(store.write_document(document, paragraphs(document.text), "test"))
    written = hits(neo4j_runner, stores, namespace)
    stored = neo4j_runner.run(run_write(store, EMBEDDINGS, namespace))
    by_text = {
        view.chunk_id: view.text
        for doc_id in ("a", "b")
        for view in neo4j_runner.run(store.document_chunks(namespace, doc_id))
    }
    for row in stored:  # the float32 values, exactly, read back as floats
        assert row["embedding"] == unit_vector(by_text[row["chunk_id"]]).tolist()

    neo4j_runner.run(run_write(store, AS_FLOAT64_LISTS, namespace))  # the layout before
    assert neo4j_runner.run(run_write(store, EMBEDDINGS, namespace)) == stored
    assert hits(neo4j_runner, stores, namespace) == written

    document = make_document(namespace, "c", TEXTS["c"], {"eng"})  # both layouts in one graph
    neo4j_runner.run(store.write_document(document, paragraphs(document.text), "test"))
    (new,) = neo4j_runner.run(store.document_chunks(namespace, "c"))
    mixed = hits(neo4j_runner, stores, namespace)
    for key, found in mixed.items():
        assert [hit for hit in found if hit[0] != new.chunk_id] == written[key]
        if key[1] == TEXTS["c"]:
            assert found[0][0] == new.chunk_id
            assert found[0][1] == pytest.approx(1.0, abs=1e-6)


def test_a_non_finite_embedding_refuses_the_batch_before_anything_is_written(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    good = make_document(namespace, "a", TEXTS["a"], {"eng"})
    bad = make_document(namespace, "b", TEXTS["b"], {"eng"})
    broken = paragraphs(bad.text)
    values = np.array(broken[1].embedding, dtype=np.float32)
    values[0] = np.nan
    chunk = broken[1]
    broken[1] = NewChunk(chunk.ordinal, chunk.start_char, chunk.end_char, chunk.text, values)
    batch = [DocumentWrite(good, tuple(paragraphs(good.text))), DocumentWrite(bad, tuple(broken))]

    with pytest.raises(ValueError, match="NaN or infinite"):
        neo4j_runner.run(neo4j_store.write_documents(namespace, batch, "test"))

    listed = neo4j_runner.run(neo4j_store.list_documents(namespace, SCOPES))
    assert listed == []
    assert neo4j_runner.run(run_write(neo4j_store, EMBEDDINGS, namespace)) == []
