"""Another process locking the store file: the embedded store's real availability faults.

:func:`locked_by_another_process` starts a separate Python process that takes a lock on the
SQLite file and holds it until the ``with`` block ends:

* ``LockKind.EXCLUSIVE`` — ``PRAGMA locking_mode = EXCLUSIVE`` plus a write: nobody else may
  even read. SQLite grants it only while no other connection has the file open for reading
  (in WAL mode every connection that has read keeps a shared lock), so it is the fault of a
  store that is locked *when the service starts* (a backup or migration holding the file).
* ``LockKind.WRITE`` — an open ``BEGIN IMMEDIATE`` transaction with a pending write: readers
  carry on (WAL), every other writer waits for the busy timeout and then fails. This is the
  mid-run fault: a long ingest or a stuck maintenance job in another process.

The process reports ``locked`` on stdout once it holds the lock; a line on its stdin releases
it (the write is rolled back, nothing changes in the store).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

__all__ = ["LOCK_TIMEOUT_S", "LockKind", "LockNotTaken", "locked_by_another_process"]

LOCK_TIMEOUT_S = 15.0

_HOLDER = """
import sqlite3, sys
path, kind = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(path, isolation_level=None, timeout=10)
try:
    if kind == "exclusive":
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("UPDATE meta SET value = value WHERE key = 'generation'")
        conn.execute("COMMIT")  # the exclusive lock stays: locking_mode = EXCLUSIVE
    else:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE meta SET value = value WHERE key = 'generation'")
except sqlite3.Error as exc:
    print(f"failed {exc}", flush=True)
    sys.exit(1)
print("locked", flush=True)
sys.stdin.readline()
if conn.in_transaction:
    conn.execute("ROLLBACK")
conn.close()
"""


class LockKind(StrEnum):
    EXCLUSIVE = "exclusive"
    WRITE = "write"


class LockNotTaken(RuntimeError):
    """The other process could not take the lock (e.g. EXCLUSIVE while the file is in use)."""


@contextmanager
def locked_by_another_process(path: Path, kind: LockKind) -> Iterator[None]:
    """Hold ``kind`` lock on ``path`` from another process for the duration of the block."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), kind.value],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None
    assert holder.stdout is not None
    try:
        line = _read_line(holder, LOCK_TIMEOUT_S)
        if line.strip() != "locked":
            raise LockNotTaken(f"{kind.value} lock on {path} not taken: {line.strip()!r}")
        yield
    finally:
        if holder.poll() is None:
            holder.stdin.write("\n")
            holder.stdin.flush()
        try:
            holder.wait(LOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        holder.stdin.close()
        holder.stdout.close()


def _read_line(holder: subprocess.Popen[str], timeout_s: float) -> str:
    """The holder's first line, or a timeout message (a reader thread keeps it bounded)."""
    lines: list[str] = []
    assert holder.stdout is not None
    stdout = holder.stdout
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines[0] if lines else f"no answer within {timeout_s:g} s"
