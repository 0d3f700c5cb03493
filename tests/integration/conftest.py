"""A real Neo4j server for the ``neo4j``-marked tests, started once per session.

The server comes from ``graphctx_lab.neo4j_launcher`` (Neo4j Community from Maven Central jars, no
Docker). Without Java 21+ or Maven the Neo4j tests are skipped with the reason, except under
``CI=true``, where a missing server fails the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from graphctx.errors import StoreUnavailableError
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.testing.requirements import missing_requirement
from graphctx_lab import neo4j_launcher as server_module


@contextmanager
def _started_neo4j() -> Iterator[Any]:
    """A fresh server, warmed up; skipped (failed under ``CI=true``) when it cannot start."""
    manager = server_module.running_neo4j()
    try:
        server = manager.__enter__()
    except server_module.Neo4jUnavailable as exc:
        missing_requirement(f"Neo4j tests: {exc}")
    try:
        _warm_up(server)
        yield server
    finally:
        manager.__exit__(None, None, None)


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[Any]:
    """The running server: ``.uri``, ``.auth``, ``.database``, ``.version``."""
    with _started_neo4j() as server:
        yield server


@pytest.fixture(scope="module")
def own_neo4j_server() -> Iterator[Any]:
    """A server for one module alone, for tests that may exhaust or stop it."""
    with _started_neo4j() as server:
        yield server


WARM_UP_S = 180.0  # a fresh server on a loaded 2-core machine can take minutes to plan


def _warm_up(server: Any) -> None:
    """Open a store on the fresh server until it succeeds (bounded): the first open plans the
    schema queries, which on a loaded machine can outlast a store's 10 s open deadline, and
    that first test would then fail for the machine's load, not for the code."""

    async def open_once() -> None:
        store = Neo4jGraphStore(server.uri, server.auth, server.database)
        try:
            await store.open()
        finally:
            await store.close()

    give_up = time.monotonic() + WARM_UP_S
    while True:
        try:
            asyncio.run(open_once())
            return
        except StoreUnavailableError:
            if time.monotonic() > give_up:
                raise


@pytest.fixture
def neo4j_runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture
def neo4j_store(neo4j_runner: asyncio.Runner, neo4j_server: Any) -> Iterator[Neo4jGraphStore]:
    """An opened store on the session's server; tests own their namespaces."""
    store = Neo4jGraphStore(neo4j_server.uri, neo4j_server.auth, neo4j_server.database)
    neo4j_runner.run(store.open())
    yield store
    neo4j_runner.run(store.close())


@pytest.fixture(scope="module")
def restartable_neo4j() -> Iterator[Any]:
    """A dedicated server this module may stop and start (``neo4j_server`` is never stopped).

    ``.uri`` (bolt), ``.routing_uri`` (neo4j), ``.auth``, ``.database``, ``.stop(kill=...)``,
    ``.start()`` (same port and data; returns once a query succeeds), ``.driver()``.
    """
    from graphctx.errors import ConfigurationError
    from graphctx_lab.chaos.neo4j_server import neo4j_server_factory

    try:
        manager = neo4j_server_factory()()
        server = manager.__enter__()
    except ConfigurationError as exc:
        missing_requirement(f"Neo4j fault tests: {exc.message}")
    try:
        yield server
    finally:
        manager.__exit__(None, None, None)


@pytest.fixture
def neo4j_proxy(neo4j_server: Any) -> Iterator[Any]:
    """A fault-injecting TCP proxy in front of the shared server (connect with bolt://)."""
    from graphctx_lab.chaos.tcp_proxy import TcpProxy

    with TcpProxy("127.0.0.1", int(neo4j_server.bolt_port)) as proxy:
        yield proxy
