"""Which chunks of a namespace (past some row id) sit in which scope set: integers only.

Both per-namespace caches of the embedded store build on it: the vector matrix (one block of
embeddings per scope set, :mod:`.vectors`) and the visible-chunk counts of full-text scoring
(:mod:`.namespace_stats`). Chunks of a document with no scopes are visible to nobody: they
are counted in ``unscoped`` and held in no group.

A full layout is built after every delete or scope rewrite, by both caches, so it is read
from two covering indexes (``chunks_layout``: namespace, row id, document; the scopes by
document), grouped by scope set in SQL and handed over as JSON arrays of integers: per chunk
and per document, Python does nothing.
"""

from __future__ import annotations

import json
import sqlite3
import threading

import numpy as np
import numpy.typing as npt

__all__ = ["FullLayouts", "ScopeLayout", "layout_count"]

_CHUNKS = """
    SELECT json_group_array(id), json_group_array(doc) FROM chunks
    WHERE namespace = ? AND id > ?
"""
_SCOPE_SETS = """
    SELECT scopes, json_group_array(doc) FROM (
        SELECT doc, json_group_array(scope) AS scopes FROM document_scopes
        WHERE doc IN (SELECT doc FROM chunks WHERE namespace = ? AND id > ?)
        GROUP BY doc
    ) GROUP BY scopes
"""


def _integers(stored: str | None) -> npt.NDArray[np.int64]:
    return np.asarray(json.loads(stored or "[]"), dtype=np.int64)


class ScopeLayout:
    def __init__(self, conn: sqlite3.Connection, namespace: str, after: int) -> None:
        index_of: dict[frozenset[str], int] = {}
        docs: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)]
        key_of_doc: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)]
        for stored_scopes, stored_docs in conn.execute(_SCOPE_SETS, (namespace, after)):
            key = frozenset(json.loads(stored_scopes))  # the same set may come twice
            docs.append(_integers(stored_docs))
            key_of_doc.append(np.full(docs[-1].shape[0], index_of.setdefault(key, len(index_of))))
        keys = list(index_of)
        scoped_docs, doc_keys = np.concatenate(docs), np.concatenate(key_of_doc)
        by_doc = np.argsort(scoped_docs)
        scoped_docs, doc_keys = scoped_docs[by_doc], doc_keys[by_doc]
        ids, of_doc = conn.execute(_CHUNKS, (namespace, after)).fetchone()
        rowids, chunk_docs = _integers(ids), _integers(of_doc)
        by_id = np.argsort(rowids)
        rowids, chunk_docs = rowids[by_id], chunk_docs[by_id]
        self.last_rowid: int = int(rowids[-1]) if rowids.shape[0] else after
        at = np.searchsorted(scoped_docs, chunk_docs).clip(max=max(0, scoped_docs.shape[0] - 1))
        scoped = scoped_docs[at] == chunk_docs if scoped_docs.shape[0] else at < 0
        self.unscoped = int(rowids.shape[0] - np.count_nonzero(scoped))
        key_index = doc_keys[at[scoped]] if scoped_docs.shape[0] else at[:0]
        rowids = rowids[scoped]
        # Groups in the order their first chunk comes, each group's row ids ascending.
        present, first, counts = np.unique(key_index, return_index=True, return_counts=True)
        order = np.argsort(key_index, kind="stable")
        ends = np.cumsum(counts)
        blocks = {
            int(k): rowids[order[e - n : e]] for k, e, n in zip(present, ends, counts, strict=True)
        }
        self.groups: dict[frozenset[str], npt.NDArray[np.int64]] = {
            keys[int(k)]: blocks[int(k)] for k in present[np.argsort(first, kind="stable")]
        }


class FullLayouts:
    """The newest full layout of each namespace, by store generation. After a delete or scope
    rewrite both caches need the same layout of the same snapshot (the request's full-text
    and vector searches, which run at once): one builds it, the other waits and reuses it.
    A layout is integers of one namespace, the same for every caller: nothing per principal."""

    def __init__(self) -> None:
        self._locks_lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._newest: dict[str, tuple[int, ScopeLayout]] = {}

    def of(self, conn: sqlite3.Connection, namespace: str, generation: int) -> ScopeLayout:
        """The layout of every chunk of ``namespace`` as of ``generation`` (``conn``'s read
        transaction is at it)."""
        with self._locks_lock:
            lock = self._locks.setdefault(namespace, threading.Lock())
        with lock:
            held = self._newest.get(namespace)
            if held is not None and held[0] == generation:
                return held[1]
            placed = ScopeLayout(conn, namespace, -1)
            if held is None or held[0] < generation:
                self._newest[namespace] = (generation, placed)
            return placed

    def clear(self) -> None:
        with self._locks_lock:
            self._newest.clear()


def layout_count(conn: sqlite3.Connection) -> int:
    """The store's count of deletes and scope rewrites (``meta.layout``): while it holds, a
    commit only appended chunks with larger row ids."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
    return 0 if row is None else int(row[0])
