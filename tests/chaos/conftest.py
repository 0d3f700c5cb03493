"""A restartable Neo4j server factory for the Neo4j chaos scenarios (CI=true: required)."""

from __future__ import annotations

from typing import Any

import pytest

from graphctx.errors import ConfigurationError
from graphctx.testing.requirements import missing_requirement


@pytest.fixture(scope="session")
def chaos_neo4j_factory() -> Any:
    from graphctx_lab.chaos.neo4j_server import neo4j_server_factory

    try:
        return neo4j_server_factory()
    except ConfigurationError as exc:
        missing_requirement(f"Neo4j chaos scenarios: {exc.message}")
