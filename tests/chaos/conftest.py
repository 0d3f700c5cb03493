"""A restartable Neo4j server factory for the Neo4j chaos scenarios (CI=true: required)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from graphctx.errors import ConfigurationError


@pytest.fixture(scope="session")
def chaos_neo4j_factory() -> Any:
    from graphctx.chaos.neo4j_server import neo4j_server_factory

    try:
        return neo4j_server_factory()
    except ConfigurationError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Neo4j is required under CI=true: {exc.message}")
        pytest.skip(f"Neo4j chaos scenarios skipped: {exc.message}")
