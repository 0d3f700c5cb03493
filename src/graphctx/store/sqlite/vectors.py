"""Exact cosine search over a namespace's chunk embeddings, pre-filtered by visibility.

The embeddings live in SQLite (one BLOB per chunk); this module keeps a contiguous float32
matrix per namespace in memory, rebuilt when the store's write generation changes. A search
first selects the rows whose document is visible to the caller's scopes and only then scores
and ranks them, so invisible chunks never take a top-k slot. Measured on this machine
(research note §6): a 100k x 384 full scan costs ~4 ms, a 10% pre-filtered gather ~2 ms.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphctx.store.records import Vector

Int64Array = npt.NDArray[np.int64]


@dataclass(frozen=True)
class NamespaceMatrix:
    generation: int
    chunk_rowids: Int64Array  # ascending
    doc_rowids: Int64Array
    matrix: npt.NDArray[np.float32]  # (n, dim), rows L2-normalised


class VectorCache:
    """Per-namespace embedding matrices, shared by every reader thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._matrices: dict[str, NamespaceMatrix] = {}

    def matrix_for(
        self, conn: sqlite3.Connection, namespace: str, generation: int
    ) -> NamespaceMatrix:
        with self._lock:
            cached = self._matrices.get(namespace)
            if cached is not None and cached.generation == generation:
                return cached
            loaded = _load(conn, namespace, generation)
            self._matrices[namespace] = loaded
            return loaded

    def clear(self) -> None:
        with self._lock:
            self._matrices.clear()


def _load(conn: sqlite3.Connection, namespace: str, generation: int) -> NamespaceMatrix:
    rows = conn.execute(
        "SELECT id, doc, embedding FROM chunks WHERE namespace = ? ORDER BY id", (namespace,)
    ).fetchall()
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return NamespaceMatrix(generation, empty, empty, np.zeros((0, 0), dtype=np.float32))
    chunk_rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    doc_rowids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
    matrix = matrix.reshape(len(rows), -1).copy()
    return NamespaceMatrix(generation, chunk_rowids, doc_rowids, matrix)


def top_k_visible(
    data: NamespaceMatrix, query: Vector, visible_docs: Int64Array, limit: int
) -> list[tuple[int, float]]:
    """(chunk rowid, cosine) of the best visible rows; ties broken by lower rowid."""
    if data.matrix.shape[0] == 0 or visible_docs.size == 0 or limit <= 0:
        return []
    rows = np.flatnonzero(np.isin(data.doc_rowids, visible_docs))
    if rows.size == 0:
        return []
    scores = data.matrix[rows] @ query.astype(np.float32, copy=False)
    k = min(limit, rows.size)
    best = np.argpartition(-scores, k - 1)[:k] if k < rows.size else np.arange(rows.size)
    ordered = sorted(best.tolist(), key=lambda i: (-float(scores[i]), int(rows[i])))
    return [(int(data.chunk_rowids[rows[i]]), float(scores[i])) for i in ordered]
