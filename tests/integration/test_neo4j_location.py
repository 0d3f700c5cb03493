"""Where a Neo4j store lives: URI, credentials and database, from the URI or the environment."""

from __future__ import annotations

import os
from typing import Any

import pytest

from graphctx.errors import ConfigurationError
from graphctx.store.neo4j import (
    init_schema_at,
    is_neo4j_location,
    parse_location,
    render_schema_report,
)

ENV = {"NEO4J_USER": "reader", "NEO4J_PASSWORD": "pw", "NEO4J_DATABASE": "graph"}


def test_credentials_and_database_come_from_the_environment() -> None:
    where = parse_location("neo4j+s://db.example.com:7687", ENV)
    assert (where.uri, where.auth, where.database, where.write_auth) == (
        "neo4j+s://db.example.com:7687",
        ("reader", "pw"),
        "graph",
        None,
    )


def test_the_uri_overrides_the_environment_and_never_keeps_the_password() -> None:
    where = parse_location("bolt://ann:s%40cret@localhost:7688/ledger", ENV)
    assert (where.uri, where.auth, where.database) == (
        "bolt://localhost:7688",
        ("ann", "s@cret"),
        "ledger",
    )
    assert "s@cret" not in repr(where)


def test_ingest_may_use_separate_write_credentials() -> None:
    env = {**ENV, "NEO4J_WRITE_USER": "loader", "NEO4J_WRITE_PASSWORD": "pw2"}
    assert parse_location("neo4j://h", env).write_auth == ("loader", "pw2")


@pytest.mark.parametrize("location", ["neo4j://h", "http://h", "bolt://"])
def test_an_incomplete_location_is_a_configuration_error(location: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_location(location, {})


def test_only_bolt_and_neo4j_schemes_are_neo4j_locations() -> None:
    found = [is_neo4j_location(x) for x in ("neo4j://h", "bolt+s://h", "store.sqlite", "neo4j")]
    assert found == [True, True, False, False]


@pytest.mark.neo4j
def test_init_command_creates_the_schema_idempotently(neo4j_server: Any) -> None:
    env = {**os.environ, **neo4j_server.env()}
    init_schema_at(neo4j_server.uri, env)
    report = init_schema_at(neo4j_server.uri, env)
    assert report.created == ()
    assert "graphctx schema ready" in render_schema_report(report)
