"""One read transaction per store read: every statement of a read sees one committed state.

A read connection runs in autocommit mode, where each statement is its own transaction. A
read made of several statements (vector search: the write generation, the chunk matrix, the
per-scope row masks, then the chunk ids of the best rows) could then see a writer's commit
land between two of them: a mask row for a chunk the matrix does not have, a best row whose
chunk is gone. In WAL mode a ``BEGIN`` costs nothing and never waits for the writer: the
snapshot is taken at the first statement and held until the transaction ends.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["one_snapshot"]


@contextmanager
def one_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block's statements in one read transaction on ``conn`` (autocommit mode)."""
    conn.execute("BEGIN")  # deferred: the read snapshot is taken by the first SELECT
    try:
        yield
    finally:
        if conn.in_transaction:  # an interrupted statement may have ended it already
            conn.execute("ROLLBACK")  # a read-only transaction: nothing to keep
