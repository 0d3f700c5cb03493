"""Which chunks of a namespace (past some row id) sit in which scope set: integers only.

Both per-namespace caches of the embedded store build on it: the vector matrix (one block of
embeddings per scope set, :mod:`.vectors`) and the visible-chunk counts of full-text scoring
(:mod:`.namespace_stats`). Chunks of a document with no scopes are visible to nobody: they
are counted in ``unscoped`` and held in no group.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import numpy.typing as npt

__all__ = ["ScopeLayout"]


class ScopeLayout:
    def __init__(self, conn: sqlite3.Connection, namespace: str, after: int) -> None:
        scopes: dict[int, set[str]] = {}
        for doc, scope in conn.execute(
            """SELECT s.doc, s.scope FROM document_scopes s WHERE s.doc IN
               (SELECT doc FROM chunks WHERE namespace = ? AND id > ?)""",
            (namespace, after),
        ):
            scopes.setdefault(doc, set()).add(scope)
        keys = {doc: frozenset(held) for doc, held in scopes.items()}
        rows = conn.execute(
            "SELECT id, doc FROM chunks WHERE namespace = ? AND id > ? ORDER BY id",
            (namespace, after),
        ).fetchall()
        self.last_rowid: int = int(rows[-1][0]) if rows else after
        self.unscoped = 0
        by_key: dict[frozenset[str], list[int]] = {}
        for rowid, doc in rows:
            key = keys.get(doc)
            if key:
                by_key.setdefault(key, []).append(rowid)
            else:
                self.unscoped += 1
        self.groups: dict[frozenset[str], npt.NDArray[np.int64]] = {
            key: np.asarray(ids, dtype=np.int64) for key, ids in by_key.items()
        }


def layout_count(conn: sqlite3.Connection) -> int:
    """The store's count of deletes and scope rewrites (``meta.layout``): while it holds, a
    commit only appended chunks with larger row ids."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
    return 0 if row is None else int(row[0])
