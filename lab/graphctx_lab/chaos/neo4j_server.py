"""A dedicated, restartable Neo4j server for the chaos scenarios (``ChaosEnv.neo4j``).

The server process comes from :mod:`graphctx_lab.neo4j_launcher.restart` (Neo4j Community from
Maven Central jars, no Docker), so this only works with Java 21+ and Maven (or a warm jar
cache). :func:`neo4j_server_factory` checks that up front and raises
``ConfigurationError`` with the reason, so ``graphctx chaos`` can skip the Neo4j scenarios
(or fail under ``--neo4j require``) before any scenario starts.

The handle adds what the process-level restart cannot know: "ready" means a query on the
database succeeds through the driver, not merely that the port is open (after a SIGKILL the
database recovers from its transaction log after Bolt already listens).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Final, Protocol

import neo4j
import neo4j.exceptions as neo4j_errors

from graphctx.errors import ConfigurationError
from graphctx_lab.neo4j_launcher import (
    Neo4jUnavailable,
    find_java,
    jars_cached,
    restartable_neo4j,
)

__all__ = ["ChaosNeo4j", "neo4j_server_factory"]

READY_TIMEOUT_S: Final = 120.0  # JVM start plus recovery; a warm start takes ~10 s here
READY_POLL_S: Final = 0.2
PROBE_TIMEOUT_S: Final = 2.0


class RestartableProcess(Protocol):
    """What the launcher's ``RestartableNeo4j`` offers (a protocol, so tests can hand in others)."""

    @property
    def uri(self) -> str: ...

    bolt_port: int
    user: str
    database: str

    @property
    def password(self) -> str: ...

    @property
    def running(self) -> bool: ...

    def stop(self, *, kill: bool = False) -> float: ...

    def start(self, timeout_s: float) -> float: ...


@dataclass
class ChaosNeo4j:
    """A running server the scenario may stop and start again (same port, same data)."""

    process: RestartableProcess
    restart_seconds: float = 0.0  # the last start(): JVM launch until a query succeeded

    @property
    def uri(self) -> str:
        """``bolt://`` (direct: required when a proxy sits in between, see tcp_proxy)."""
        return self.process.uri

    @property
    def routing_uri(self) -> str:
        """``neo4j://``: the routing driver, as production deployments use it."""
        return f"neo4j://127.0.0.1:{self.bolt_port}"

    @property
    def bolt_port(self) -> int:
        return self.process.bolt_port

    @property
    def auth(self) -> tuple[str, str]:
        return (self.process.user, self.process.password)

    @property
    def database(self) -> str:
        return self.process.database

    @property
    def running(self) -> bool:
        return self.process.running

    def driver(self) -> neo4j.Driver:
        """A direct synchronous driver for checks and probes (server notifications off)."""
        return neo4j.GraphDatabase.driver(
            self.uri,
            auth=self.auth,
            connection_timeout=PROBE_TIMEOUT_S,
            notifications_min_severity="OFF",
        )

    def stop(self, *, kill: bool = False) -> float:
        """SIGTERM (clean) or SIGKILL (crash); seconds until the JVM exited."""
        return self.process.stop(kill=kill)

    def start(self, timeout_s: float = READY_TIMEOUT_S) -> float:
        """Start again on the same port and data; return once a query succeeds."""
        started = time.monotonic()
        self.process.start(timeout_s)
        wait_until_queryable(self, started + timeout_s)
        self.restart_seconds = time.monotonic() - started
        return self.restart_seconds


def wait_until_queryable(server: ChaosNeo4j, deadline: float) -> None:
    """Poll ``RETURN 1`` on the database with a fresh driver until it answers or time is up."""
    last: Exception | None = None
    with server.driver() as driver:
        while time.monotonic() < deadline:
            try:
                driver.execute_query("RETURN 1 AS ok", database_=server.database, routing_="r")
                return
            except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
                last = exc
                time.sleep(READY_POLL_S)
    raise TimeoutError(f"Neo4j on {server.uri} did not answer a query in time: {last}")


def neo4j_server_factory() -> Callable[[], AbstractContextManager[ChaosNeo4j]]:
    """A zero-argument callable starting a dedicated server per call (one per scenario).

    Raises ``ConfigurationError`` when no server can be provided here: no Java 21+, or
    neither cached jars nor Maven.
    """
    try:
        find_java()
    except Neo4jUnavailable as exc:
        raise ConfigurationError(f"no Neo4j server here: {exc.message}") from exc
    if not jars_cached() and shutil.which("mvn") is None:
        raise ConfigurationError(
            "no Neo4j server here: no cached Neo4j jars and `mvn` is not on PATH"
        )

    @contextmanager
    def running() -> Iterator[ChaosNeo4j]:
        manager = restartable_neo4j(startup_timeout_s=READY_TIMEOUT_S)
        try:
            process = manager.__enter__()
        except Neo4jUnavailable as exc:
            raise ConfigurationError(f"Neo4j did not start: {exc}") from exc
        try:
            handle = ChaosNeo4j(process)
            wait_until_queryable(handle, time.monotonic() + READY_TIMEOUT_S)
            yield handle
        finally:
            manager.__exit__(None, None, None)

    return running
