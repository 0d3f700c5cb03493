from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.batch_conformance import BatchWriteConformance
from graphctx.testing.conformance import GraphStoreConformance
from graphctx.testing.graph_conformance import GraphLayerConformance
from graphctx.testing.lifecycle_conformance import GraphLifecycleConformance
from graphctx.testing.write_conformance import WriteSafetyConformance


class TestSqliteGraphStore(
    GraphStoreConformance,
    GraphLayerConformance,
    GraphLifecycleConformance,
    WriteSafetyConformance,
    BatchWriteConformance,
):
    @pytest.fixture
    def store(self, runner: asyncio.Runner, tmp_path: Path) -> Iterator[SqliteGraphStore]:
        store = SqliteGraphStore(tmp_path / "store.sqlite")
        runner.run(store.open())
        yield store
        runner.run(store.close())
