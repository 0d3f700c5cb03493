"""The candidate statement's lists are those of the separate searches, for every strategy."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from graphctx.store.neo4j import Neo4jGraphStore, VectorStrategy
from graphctx.store.records import Vector
from graphctx.testing.fixtures import make_document, paragraphs, unit_vector

pytestmark = pytest.mark.neo4j

WORDS = ["kafka", "broker", "topic", "offset", "replica", "leader", "queue", "stream"]
SETTINGS = [
    (VectorStrategy.EXACT, 1_000),
    (VectorStrategy.IN_INDEX, 1_000),
    (VectorStrategy.AUTO, 0),  # in-index chosen on the server
    (VectorStrategy.AUTO, 1_000),  # exact chosen on the server
]


SCOPE_GRANTS = (frozenset({"eng"}), frozenset({"eng", "ops", "hr"}))


def _written_namespace(runner: asyncio.Runner, store: Neo4jGraphStore) -> str:
    """A new namespace of 24 short documents over three scopes."""
    namespace = "t" + uuid.uuid4().hex[:12]
    for i in range(24):
        text = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(i % 5 + 2))
        doc = make_document(namespace, f"d{i}", text, {["eng", "ops", "hr"][i % 3]})
        runner.run(store.write_document(doc, paragraphs(doc.text), "test"))
    return namespace


async def _ready(vector: Vector) -> Vector:
    return vector


@pytest.mark.parametrize(("strategy", "exact_max"), SETTINGS, ids=lambda s: str(s))
def test_candidate_lists_equal_the_separate_searches(
    neo4j_runner: asyncio.Runner,
    neo4j_store: Neo4jGraphStore,
    strategy: VectorStrategy,
    exact_max: int,
) -> None:
    namespace = _written_namespace(neo4j_runner, neo4j_store)
    neo4j_store.vector_strategy, neo4j_store.exact_max_chunks = strategy, exact_max
    vector = unit_vector("kafka topic")
    for scopes in SCOPE_GRANTS:
        deadline = time.monotonic() + 60
        found = neo4j_runner.run(
            neo4j_store.search_candidates(
                namespace, "kafka topic", _ready(vector), scopes, 5, deadline
            )
        )
        assert found.fulltext is not None
        assert found.vector is not None
        assert found.fulltext.hits == neo4j_runner.run(
            neo4j_store.fulltext_search(namespace, "kafka topic", scopes, 5, deadline)
        )
        assert found.vector.hits == neo4j_runner.run(
            neo4j_store.vector_search(namespace, vector, scopes, 5, deadline)
        )
        assert found.vector.hits
        assert found.fulltext.hits


@pytest.mark.parametrize(("strategy", "exact_max"), SETTINGS, ids=lambda s: str(s))
def test_candidate_views_are_the_scoped_fetch_of_every_hit(
    neo4j_runner: asyncio.Runner,
    neo4j_store: Neo4jGraphStore,
    strategy: VectorStrategy,
    exact_max: int,
) -> None:
    namespace = _written_namespace(neo4j_runner, neo4j_store)
    neo4j_store.vector_strategy, neo4j_store.exact_max_chunks = strategy, exact_max
    vector = unit_vector("kafka topic")
    for scopes in SCOPE_GRANTS:
        deadline = time.monotonic() + 60
        found = neo4j_runner.run(
            neo4j_store.search_candidates(
                namespace, "kafka topic", _ready(vector), scopes, 5, deadline
            )
        )
        assert found.fulltext is not None
        assert found.fulltext.hits is not None
        assert found.vector is not None
        assert found.vector.hits is not None
        hits = [h.chunk_id for h in (*found.fulltext.hits, *found.vector.hits)]
        assert len(set(hits)) > 5  # both lists, not the same chunks
        fetched = neo4j_runner.run(neo4j_store.fetch_chunks(namespace, hits, scopes, deadline))
        assert len(found.views) == len(set(hits))
        assert {v.chunk_id: v for v in found.views} == {v.chunk_id: v for v in fetched}
