"""Start a throwaway Neo4j Community server for tests, without Docker.

The server's jars come from Maven Central through ``pom.xml`` (next to this package) and
are cached under ``~/.cache/graphctx/neo4j/<version>/<pom hash>/lib`` so only
the first run calls Maven. Each :func:`running_neo4j` call starts a fresh
server in a new temporary directory (own data, logs and config), with Bolt on a
free loopback port, HTTP disabled and auth enabled with a generated password,
and removes everything again on exit.

Stdlib only. Typical pytest use::

    @pytest.fixture(scope="session")
    def neo4j_server() -> Iterator[Neo4jServer]:
        try:
            with running_neo4j() as server:
                yield server
        except Neo4jUnavailable as exc:
            if os.environ.get("CI") == "true":
                pytest.fail(str(exc))
            pytest.skip(str(exc))

(The try/except only guards start-up: an exception raised by the test body is
not a ``Neo4jUnavailable`` unless the test raises one itself.)

Command line: ``python -m graphctx_lab.neo4j_launcher --check`` starts a server, runs a
query over Bolt with the generated password, prints version and timings and
stops it; ``--serve`` keeps it running and prints NEO4J_* variables.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graphctx_lab.neo4j_launcher.errors import Neo4jUnavailable
from graphctx_lab.neo4j_launcher.home import (
    free_port,
    new_home,
    sweep_stale_homes,
    write_config,
)
from graphctx_lab.neo4j_launcher.jars import neo4j_version, resolve_jars
from graphctx_lab.neo4j_launcher.java import JavaRuntime, find_java
from graphctx_lab.neo4j_launcher.jvm import launch_jvm, set_initial_password, stop_jvm
from graphctx_lab.neo4j_launcher.logs import CONSOLE_LOG
from graphctx_lab.neo4j_launcher.password import initial_password

__all__ = ["DATABASE", "USER", "Neo4jServer", "running_neo4j"]

USER = "neo4j"
DATABASE = "neo4j"

_PORT_IN_USE_RE = re.compile(r"Address already in use|BindException", re.IGNORECASE)


@dataclass(frozen=True)
class Neo4jServer:
    """Handle on a running server; valid only inside ``running_neo4j``."""

    uri: str
    user: str
    password: str = field(repr=False)  # a Secret from running_neo4j: its repr hides it too
    database: str
    version: str
    bolt_port: int
    home: Path
    log_file: Path
    java: JavaRuntime
    startup_s: float
    process: subprocess.Popen[bytes] = field(repr=False, compare=False)

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    def env(self) -> dict[str, str]:
        """NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD / NEO4J_DATABASE for this server."""
        return {
            "NEO4J_URI": self.uri,
            "NEO4J_USER": self.user,
            "NEO4J_PASSWORD": self.password,
            "NEO4J_DATABASE": self.database,
        }


def _start_once(
    java: JavaRuntime,
    lib: Path,
    version: str,
    home: Path,
    *,
    startup_timeout_s: float,
    heap: str,
    pagecache: str,
    started_at: float,
) -> Neo4jServer:
    deadline = time.monotonic() + startup_timeout_s
    port = free_port()
    conf = write_config(home, port, pagecache)
    password = initial_password()
    set_initial_password(java, lib, home, conf, password, timeout_s=startup_timeout_s)
    process = launch_jvm(java, lib, home, port, heap=heap, deadline=deadline)
    return Neo4jServer(
        uri=f"bolt://127.0.0.1:{port}",
        user=USER,
        password=password,
        database=DATABASE,
        version=version,
        bolt_port=port,
        home=home,
        log_file=home / CONSOLE_LOG,
        java=java,
        startup_s=time.monotonic() - started_at,
        process=process,
    )


@contextlib.contextmanager
def running_neo4j(
    cache_dir: Path | None = None,
    startup_timeout_s: float = 120,
    *,
    heap: str = "1g",
    pagecache: str = "256m",
    stop_timeout_s: float = 30,
    keep_home: bool = False,
) -> Iterator[Neo4jServer]:
    """Start a fresh Neo4j Community server, yield its handle, then stop and clean up.

    ``startup_timeout_s`` covers ``set-initial-password`` plus the server JVM
    until Bolt accepts connections and the log says ``Started.``; a cold Maven
    download before it is not counted. ``heap`` sets -Xms/-Xmx (the neo4j.conf
    heap keys are read only by the ``neo4j`` launcher script, not used here).
    Raises :class:`Neo4jUnavailable` on any failure to provide the server.
    ``keep_home`` (or GRAPHCTX_NEO4J_KEEP=1) keeps the temp dir (logs, data).

    The JVM gets PR_SET_PDEATHSIG: it is sent SIGTERM when the *thread* that
    entered this context exits, so enter it from a long-lived thread (pytest's
    main thread is fine).
    """
    started_at = time.monotonic()
    java = find_java()
    lib = resolve_jars(cache_dir)
    version = neo4j_version()
    keep = keep_home or os.environ.get("GRAPHCTX_NEO4J_KEEP") == "1"
    server: Neo4jServer | None = None
    sweep_stale_homes()
    home = new_home()
    try:
        for attempt in range(3):
            try:
                server = _start_once(
                    java, lib, version, home,
                    startup_timeout_s=startup_timeout_s, heap=heap, pagecache=pagecache,
                    started_at=started_at,
                )  # fmt: skip
                break
            except Neo4jUnavailable as exc:
                # Lost the race for the free port: retry in a fresh directory.
                if (
                    exc.reason != "exited"
                    or not _PORT_IN_USE_RE.search(exc.log_tail)
                    or attempt == 2
                ):
                    raise
                shutil.rmtree(home, ignore_errors=True)
                home = new_home()
        assert server is not None
        yield server
    finally:
        if server is not None:
            stop_jvm(server.process, stop_timeout_s)
        if keep:
            print(f"[graphctx-neo4j] kept {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)
