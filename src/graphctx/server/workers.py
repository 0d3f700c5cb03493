"""``graphctx serve --workers N``: N worker processes forked from one supervisor.

One interpreter runs one request's Python at a time, and retrieval is mostly Python
(fusion, packing, the output gate), so one process uses one core however many requests it
holds. The supervisor binds one SO_REUSEPORT socket per worker on the port
(:func:`graphctx.server.listen.bind_listeners`: the kernel spreads connections evenly),
forks ``N`` workers that each build their own app and provider (store connections and the
embedding model are made after the fork) and serve their socket, and stops them all on
SIGTERM or SIGINT.

What a guarantee needs across workers lives in :class:`SharedState`, made before the fork:

* per-key request rates and failed-key budgets: SQLite token buckets in one file
  (:mod:`graphctx.server.shared_limits`), so N workers never allow N times a key's rate;
* the cap on scrypt checks running at once: one semaphore for the whole service;
* ``/metrics``: prometheus_client's multiprocess mode, every worker's counters summed;
* explorer sessions: one SQLite table (:mod:`graphctx.server.ui.shared_sessions`).

Writes need nothing more: every store guards them inside its own write transaction
(compare-and-set expectations, one transaction per document), whichever process commits.
A worker that dies stops the service (exit 1) rather than serving on with fewer workers;
the process manager in front restarts it. A graceful stop lets each worker finish its
requests and close its store, as a single process does.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.synchronize import Semaphore
from pathlib import Path
from types import FrameType
from typing import Final

from starlette.types import ASGIApp

from graphctx.server.logs import log_event
from graphctx.server.ratelimit import RateLimiter
from graphctx.server.shared_limits import SqliteTokenBucketLimiter

__all__ = ["METRICS_DIR_VARIABLE", "SharedState", "serve_workers"]

METRICS_DIR_VARIABLE: Final = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's
PARENT_CHECK_S: Final = 1.0  # how often a worker checks that its supervisor still runs

log = logging.getLogger("graphctx.server")


@dataclass(frozen=True)
class SharedState:
    """What the workers of one service share; made by the supervisor before it forks."""

    directory: Path
    key_checks: Semaphore

    @classmethod
    def create(cls, key_checks: int) -> SharedState:
        """A private run directory (mode 0700) and a semaphore of ``key_checks`` slots; puts
        prometheus_client in multiprocess mode over the directory's ``metrics``, before any
        metric exists (the workers make theirs after the fork)."""
        from prometheus_client import values

        directory = Path(tempfile.mkdtemp(prefix="graphctx-serve-"))
        (directory / "metrics").mkdir()
        os.environ[METRICS_DIR_VARIABLE] = str(directory / "metrics")
        values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]
        return cls(directory, multiprocessing.get_context("fork").BoundedSemaphore(key_checks))

    @property
    def metrics_dir(self) -> Path:
        return self.directory / "metrics"

    @property
    def database(self) -> Path:
        return self.directory / "shared.sqlite"

    def limiter(self, name: str, rate: float, burst: int) -> RateLimiter:
        return SqliteTokenBucketLimiter(self.database, name, rate, burst)

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def serve_workers(
    build_app: Callable[[], ASGIApp],
    listeners: Sequence[socket.socket],
    run: Callable[[ASGIApp, socket.socket], None],
) -> int:
    """Fork one process per listener that ``run(build_app(), listener)``s; return 0 after a
    requested stop, 1 when a worker ended by itself (the others are stopped then)."""
    children: set[int] = set()
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            _signal(pid, signal.SIGTERM)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        for listener in listeners:
            if stopping:
                break
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                for other in listeners:
                    if other is not listener:
                        other.close()
                _worker(build_app, listener, run, os.getppid())
            children.add(pid)
        for listener in listeners:
            listener.close()  # the workers hold theirs
        log_event(log, f"started {len(children)} workers", workers=sorted(children))
        failed = False
        while children:
            pid, status = os.wait()
            children.discard(pid)
            if not stopping:
                code = os.waitstatus_to_exitcode(status)
                log_event(log, "a worker ended: stopping", logging.ERROR, pid=pid, code=code)
                failed = True
                stop(signal.SIGTERM, None)
        return 1 if failed else 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _worker(
    build_app: Callable[[], ASGIApp],
    listener: socket.socket,
    run: Callable[[ASGIApp, socket.socket], None],
    supervisor: int,
) -> None:
    code = 0
    try:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)  # uvicorn installs its own while it runs
        os.setpgid(0, 0)  # a terminal's Ctrl-C reaches the supervisor only, which stops us once
        threading.Thread(target=_follow, args=(supervisor,), daemon=True).start()
        run(build_app(), listener)
    except BaseException:
        log.exception("the worker failed")
        code = 1
    finally:
        logging.shutdown()
        os._exit(code)


def _follow(supervisor: int) -> None:
    """Stop this worker gracefully once its supervisor is gone (killed without a stop)."""
    while os.getppid() == supervisor:
        threading.Event().wait(PARENT_CHECK_S)
    _signal(os.getpid(), signal.SIGTERM)


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)
