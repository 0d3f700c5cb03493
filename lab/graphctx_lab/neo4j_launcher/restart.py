"""A Neo4j server that can be stopped and started again, for fault tests.

:func:`restartable_neo4j` starts a throwaway server like ``server.running_neo4j`` does (same
jars, same configuration, generated password), but the handle it yields can be stopped with
SIGTERM (a clean shutdown) or SIGKILL (a crash: no checkpoint, recovery from the transaction
log on the next start) and started again on **the same Bolt port and data directory**, so a
client's driver can reconnect to the address it already has and committed data survives.

Readiness here is the process's: the Bolt port accepts connections and the console log of
*this* launch says ``Started.``. A driver-level probe (a query that succeeds) belongs to the
caller, which has the driver (this module is stdlib only, like the rest of the launcher).

"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from graphctx_lab.neo4j_launcher.home import (
    free_port,
    new_home,
    sweep_stale_homes,
    write_config,
)
from graphctx_lab.neo4j_launcher.jars import neo4j_version, resolve_jars
from graphctx_lab.neo4j_launcher.java import JavaRuntime, find_java
from graphctx_lab.neo4j_launcher.jvm import launch_jvm, set_initial_password, stop_jvm
from graphctx_lab.neo4j_launcher.password import initial_password
from graphctx_lab.neo4j_launcher.server import DATABASE, USER

__all__ = ["RestartableNeo4j", "restartable_neo4j"]

STOP_TIMEOUT_S = 30.0  # SIGTERM -> exit; SIGKILL after this


class RestartableNeo4j:
    """One server home (config, data, logs) and the JVM currently serving it, if any.

    Not thread-safe: one thread stops and starts it (the JVM dies with the thread that
    started it, see ``jvm._child_setup``, so that thread must outlive the server).
    """

    def __init__(self, java: JavaRuntime, lib: Path, home: Path, port: int, heap: str) -> None:
        self._java = java
        self._lib = lib
        self._heap = heap
        self.home = home
        self.bolt_port = port
        self.password = initial_password()  # never read as an option, repr hidden
        self.user: str = USER
        self.database: str = DATABASE
        self.version: str = neo4j_version()
        self.launches = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def configure(self, pagecache: str, startup_timeout_s: float) -> None:
        """Write the config and the initial password (first start only)."""
        conf = write_config(self.home, self.bolt_port, pagecache)
        set_initial_password(
            self._java, self._lib, self.home, conf, self.password, timeout_s=startup_timeout_s
        )

    def start(self, timeout_s: float = 120.0) -> float:
        """Launch the JVM on the same port and data; return the seconds until it served."""
        if self.running:
            raise RuntimeError("the server is already running")
        started = time.monotonic()
        self._process = launch_jvm(
            self._java,
            self._lib,
            self.home,
            self.bolt_port,
            heap=self._heap,
            deadline=started + timeout_s,
        )
        self.launches += 1
        return time.monotonic() - started

    def stop(self, *, kill: bool = False, timeout_s: float = STOP_TIMEOUT_S) -> float:
        """SIGTERM (clean shutdown) or SIGKILL (crash); return the seconds until it exited.

        After SIGKILL the next start recovers from the transaction log: committed
        transactions survive, an uncommitted one leaves nothing behind.
        """
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return 0.0
        started = time.monotonic()
        if kill:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=timeout_s)
        else:
            stop_jvm(process, timeout_s)
        return time.monotonic() - started

    def close(self) -> None:
        self.stop()


@contextlib.contextmanager
def restartable_neo4j(
    cache_dir: Path | None = None,
    startup_timeout_s: float = 120.0,
    *,
    heap: str = "1g",
    pagecache: str = "256m",
    keep_home: bool = False,
) -> Iterator[RestartableNeo4j]:
    """Start a fresh server and yield its restartable handle; stop and clean up on exit.

    Raises ``Neo4jUnavailable`` when no server can be provided.
    """
    java = find_java()
    lib = resolve_jars(cache_dir)
    sweep_stale_homes()
    home: Path = new_home()
    handle: RestartableNeo4j | None = None
    try:
        handle = RestartableNeo4j(java, lib, home, free_port(), heap)
        handle.configure(pagecache, startup_timeout_s)
        handle.start(startup_timeout_s)
        yield handle
    finally:
        if handle is not None:
            handle.close()
        if keep_home or os.environ.get("GRAPHCTX_NEO4J_KEEP") == "1":
            print(f"[graphctx-neo4j] kept {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)
