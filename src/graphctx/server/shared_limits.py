"""Token buckets shared by the processes of one ``graphctx serve --workers N``.

Each worker has its own interpreter, so an in-memory bucket per worker would hand every key
N times its rate and N times its failure budget. Here the buckets live in one SQLite file in
the service's private run directory (:class:`graphctx.server.workers.SharedState`); a take
is one ``BEGIN IMMEDIATE`` transaction, so two workers never both spend the same token.

The clock is ``time.monotonic``: on Linux one clock for every process of the machine. A
bucket that has refilled to its burst is the same as no bucket, so such rows are pruned now
and then without granting anything. When the file cannot be written in time the take fails
closed: the request is refused as over its rate, never let through uncounted.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

__all__ = ["SqliteTokenBucketLimiter"]

BUSY_TIMEOUT_MS: Final = 2_000
PRUNE_EVERY: Final = 1_000  # takes between two prunes of refilled buckets
REFUSED_WAIT_S: Final = 1.0  # what a take that could not reach the file answers
SET_UP_RETRY_S: Final = 0.005

_SCHEMA = """
CREATE TABLE IF NOT EXISTS buckets (
    name TEXT PRIMARY KEY,
    tokens REAL NOT NULL,
    updated REAL NOT NULL
) WITHOUT ROWID
"""


class SqliteTokenBucketLimiter:
    """``rate`` tokens per second refill each key's bucket up to ``burst``; a request takes
    one. ``limiter`` names this set of buckets inside the shared file."""

    def __init__(
        self,
        path: Path,
        limiter: str,
        rate: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0 or burst <= 0:
            raise ValueError("rate and burst must be positive")
        self._path = path
        self._prefix = f"{limiter}|"
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._takes = 0

    def acquire(self, key: str) -> float:
        """Take a token: 0.0 when allowed, else the seconds until one is available."""
        return self._take(key, spend=True)

    def available(self, key: str) -> bool:
        """True when ``acquire`` would succeed; takes nothing."""
        return self._take(key, spend=False) == 0.0

    def _take(self, key: str, *, spend: bool) -> float:
        name = self._prefix + key
        try:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                now = self._clock()
                row = conn.execute(
                    "SELECT tokens, updated FROM buckets WHERE name = ?", (name,)
                ).fetchone()
                tokens = self._burst if row is None else self._refilled(row[0], row[1], now)
                wait_s = 0.0 if tokens >= 1.0 else (1.0 - tokens) / self._rate
                if spend and wait_s == 0.0:
                    tokens -= 1.0
                conn.execute(
                    "INSERT INTO buckets (name, tokens, updated) VALUES (?, ?, ?)"
                    " ON CONFLICT (name) DO UPDATE SET tokens = excluded.tokens,"
                    " updated = excluded.updated",
                    (name, tokens, now),
                )
                self._takes += 1
                if self._takes % PRUNE_EVERY == 0:
                    self._prune(conn, now)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error:
            return REFUSED_WAIT_S  # fail closed
        return wait_s

    def _refilled(self, tokens: float, updated: float, now: float) -> float:
        return min(self._burst, tokens + max(0.0, now - updated) * self._rate)

    def _prune(self, conn: sqlite3.Connection, now: float) -> None:
        """Drop this limiter's buckets that are full again (the same as absent)."""
        conn.execute(
            "DELETE FROM buckets WHERE name >= ? AND name < ? AND tokens + (? - updated) * ? >= ?",
            (self._prefix, self._prefix[:-1] + "}", now, self._rate, self._burst),
        )

    def _connection(self) -> sqlite3.Connection:
        """This process's connection (a forked worker never uses its parent's)."""
        if self._conn is None or self._pid != os.getpid():
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _set_up(conn)
            self._conn, self._pid = conn, os.getpid()
        return self._conn


def _set_up(conn: sqlite3.Connection) -> None:
    """WAL mode and the table, retried while other processes set up the same new file.

    Switching a new file to WAL while another connection does the same answers "database is
    locked" at once, without waiting out the busy timeout; the workers' first requests come
    together, so a fresh service refused some of them (429) as if over their rate."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = OFF")  # the buckets do not outlive the service
            conn.execute(_SCHEMA)
            return
        except sqlite3.OperationalError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(SET_UP_RETRY_S)
