"""The workers' shared token buckets answer their first takes on a new file (no false 429).

``graphctx serve --workers N`` keeps each key's bucket in one SQLite file shared by the
workers. Their first requests come together, and each worker's first take also switches the
new file to WAL mode: a switch that met another process's answered "database is locked" at
once, and the take failed closed, so a fresh service refused a valid first request as over
its rate (a flaky ``graphctx bench http`` run: 12 requests, one 429). Real processes, real
files, a barrier so they start together.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path

from graphctx.server.shared_limits import SqliteTokenBucketLimiter

PROCESSES = 4
FRESH_FILES = 15


def _first_take(path: Path, start: Barrier, waits: multiprocessing.Queue[float]) -> None:
    limiter = SqliteTokenBucketLimiter(path, "rate", 1_000_000.0, 1_000_000)
    start.wait()
    waits.put(limiter.acquire("key:bench"))


def test_processes_taking_together_from_a_new_file_are_all_granted(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    refused = 0
    for trial in range(FRESH_FILES):
        path = tmp_path / f"limits-{trial}.sqlite"
        start = context.Barrier(PROCESSES)
        waits: multiprocessing.Queue[float] = context.Queue()
        processes = [
            context.Process(target=_first_take, args=(path, start, waits)) for _ in range(PROCESSES)
        ]
        for process in processes:
            process.start()
        answers = [waits.get(timeout=60) for _ in processes]
        for process in processes:
            process.join(timeout=60)
        refused += sum(1 for wait in answers if wait > 0)
    assert refused == 0, f"{refused} of {PROCESSES * FRESH_FILES} first takes refused"
