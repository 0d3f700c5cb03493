"""The GraphStore conformance suite against a real Neo4j server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.testing.batch_conformance import BatchWriteConformance
from graphctx.testing.conformance import GraphStoreConformance
from graphctx.testing.graph_conformance import GraphLayerConformance
from graphctx.testing.lifecycle_conformance import GraphLifecycleConformance
from graphctx.testing.write_conformance import WriteSafetyConformance

pytestmark = pytest.mark.neo4j


class TestNeo4jGraphStore(
    GraphStoreConformance,
    GraphLayerConformance,
    GraphLifecycleConformance,
    WriteSafetyConformance,
    BatchWriteConformance,
):
    @pytest.fixture
    def store(self, runner: asyncio.Runner, neo4j_server: Any) -> Iterator[Neo4jGraphStore]:
        store = Neo4jGraphStore(neo4j_server.uri, neo4j_server.auth, neo4j_server.database)
        runner.run(store.open())
        yield store
        runner.run(store.close())
