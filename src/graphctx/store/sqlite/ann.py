"""Optional approximate vector candidates for the embedded store: a filtered IVF index (faiss).

Off unless the store is opened with ``SqliteGraphStore(path, ann=AnnSettings())`` and the
``ann`` extra (faiss-cpu) is installed; without either the store scans exactly
(:mod:`.vector_scan`). It pays off only for large visible sets: below
``AnnSettings.min_visible_rows`` visible rows the exact scan answers.

The caller's scopes are a filter *inside* the search, never a filter after it: the rows of
the caller's visible scope groups, taken from the reader's own snapshot (the same
:class:`~graphctx.store.sqlite.vector_groups.NamespaceMatrix` the exact scan reads), become a
faiss ``IDSelectorBitmap`` that the IVF scan consults before a row can enter its result
heap. The index holds SQ8 codes of the embeddings keyed by chunk row id; the candidates it
returns are re-scored exactly (:func:`~graphctx.store.sqlite.vector_scan.exact_scores`) from
their float32 embeddings read in the same snapshot, so scores are the exact scan's.

Nothing the caller may not see can come out, whatever the index still holds: a deleted chunk
is in no scope group of the snapshot and its row is gone from SQLite; a re-scoped chunk is
in the group of its new scope set. An out-of-date index can cost recall, never access.
Maintenance keeps recall: before a search at a newer generation the index adds the rows
appended since it was built; after deletes or scope rewrites it drops the rows no longer
held and re-adds every row whose id SQLite may have handed out again (``chunk_deletes``).

The first search of a large namespace starts the build in a background thread and is
answered by the exact scan, as is every search until the index is ready;
:meth:`AnnVectors.build` builds at once (the bench and the tests call it).
"""

from __future__ import annotations

import importlib
import math
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from graphctx.extras import require_extra
from graphctx.store.records import Vector
from graphctx.store.sqlite.vector_groups import NamespaceMatrix
from graphctx.store.sqlite.vector_scan import exact_scores

__all__ = ["AnnSettings", "AnnVectors", "BuildReport", "FilteredIvfIndex", "load_faiss"]

Int64Array = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]
ADD_BATCH = 65_536  # rows converted and added per step (bounds the transient float32 copy)
TRAIN_ROWS_PER_LIST = 64  # k-means sample: this many rows per list, at most
MIN_ROWS_PER_LIST = 39  # faiss warns below this many training rows per centroid
ID_BATCH = 500  # row ids per ``IN (...)`` read of the re-scoring
TRAIN_SEED = 20261201


def load_faiss() -> ModuleType:
    """The faiss module, or a MissingExtraError naming the ``ann`` extra."""
    require_extra("ann")
    return importlib.import_module("faiss")


@dataclass(frozen=True)
class AnnSettings:
    min_visible_rows: int = 50_000  # fewer visible rows than this: the exact scan answers
    lists_per_sqrt_row: float = 1.0  # IVF lists = this * sqrt(rows)
    nprobe: int = 48  # lists scanned per search
    oversample: int = 2  # candidates taken = oversample * limit, re-scored exactly

    def lists_for(self, rows: int) -> int:
        wanted = round(self.lists_per_sqrt_row * math.sqrt(max(1, rows)))
        return max(1, min(wanted, rows // MIN_ROWS_PER_LIST))


@dataclass(frozen=True)
class BuildReport:
    rows: int
    lists: int
    seconds: float
    index_bytes: int  # SQ8 codes and ids in the inverted lists, plus the centroids


class FilteredIvfIndex:
    """An IVF-SQ8 inner-product index over chunk row ids, searched under an id filter.

    Not safe for concurrent use: :class:`AnnVectors` holds a lock around every call."""

    def __init__(self, faiss: ModuleType, dim: int, lists: int) -> None:
        self._faiss = faiss
        self.dim = dim
        self.lists = lists
        self._quantizer = faiss.IndexFlatIP(dim)
        self._index: Any = faiss.IndexIVFScalarQuantizer(
            self._quantizer, dim, lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        self._index.cp.min_points_per_centroid = 1  # a tiny namespace: fewer rows than usual
        self.indexed: Int64Array = np.zeros(0, dtype=np.int64)  # ascending

    def train(self, sample: F32) -> None:
        self._index.train(np.ascontiguousarray(sample, dtype=np.float32))

    def add(self, rowids: Int64Array, rows: F32) -> None:
        if rowids.shape[0] == 0:
            return
        self._index.add_with_ids(np.ascontiguousarray(rows, dtype=np.float32), rowids)
        self.indexed = np.union1d(self.indexed, rowids)

    def remove(self, rowids: Int64Array) -> None:
        if rowids.shape[0] == 0:
            return
        self._index.remove_ids(self._faiss.IDSelectorBatch(np.ascontiguousarray(rowids)))
        self.indexed = np.setdiff1d(self.indexed, rowids, assume_unique=True)

    def candidates(self, query: F32, allowed: Int64Array, k: int, nprobe: int) -> Int64Array:
        """Up to ``k`` row ids among ``allowed`` nearest ``query``: the filter is applied in
        the IVF scan (a row outside ``allowed`` is never scored nor returned)."""
        if allowed.shape[0] == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64)
        bits = np.zeros(int(allowed.max()) + 1, dtype=np.bool_)
        bits[allowed] = True
        packed = np.packbits(bits, bitorder="little")  # bit i of the map: row id i
        selector = self._faiss.IDSelectorBitmap(packed.shape[0], self._faiss.swig_ptr(packed))
        params = self._faiss.SearchParametersIVF(sel=selector, nprobe=min(nprobe, self.lists))
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        _, found = self._index.search(q, k, params=params)
        del packed  # the bitmap must outlive the search above
        ids: Int64Array = found[0]
        return ids[ids >= 0]

    @property
    def size_bytes(self) -> int:
        codes = int(self._index.ntotal) * (int(self._index.code_size) + 8)
        return codes + self.lists * self.dim * 4


@dataclass
class _Namespace:
    index: FilteredIvfIndex
    generation: int
    layout: int
    last_rowid: int
    lock: threading.Lock


class AnnVectors:
    """One filtered index per namespace of a store, kept in step with its matrices."""

    def __init__(self, settings: AnnSettings) -> None:
        self.settings = settings
        self._faiss = load_faiss()
        self._lock = threading.Lock()
        self._ready: dict[str, _Namespace] = {}
        self._building: set[str] = set()

    def clear(self) -> None:
        with self._lock:
            self._ready.clear()

    # --- building ----------------------------------------------------------------------
    def build(self, namespace: str, data: NamespaceMatrix) -> BuildReport:
        """Build the namespace's index from ``data`` now and publish it."""
        started = time.perf_counter()
        rows = data.rows
        lists = self.settings.lists_for(rows)
        index = FilteredIvfIndex(self._faiss, data.dim, lists)
        index.train(_sample(data, lists * TRAIN_ROWS_PER_LIST))
        for rowids, matrix in _row_batches(data, None):
            index.add(rowids, matrix)
        entry = _Namespace(index, data.generation, data.layout, data.last_rowid, threading.Lock())
        with self._lock:
            current = self._ready.get(namespace)
            if current is None or current.generation <= data.generation:
                self._ready[namespace] = entry
        return BuildReport(rows, lists, time.perf_counter() - started, index.size_bytes)

    def _build_in_background(self, namespace: str, data: NamespaceMatrix) -> None:
        try:
            self.build(namespace, data)
        finally:
            with self._lock:
                self._building.discard(namespace)

    def _entry(self, namespace: str, data: NamespaceMatrix) -> _Namespace | None:
        with self._lock:
            entry = self._ready.get(namespace)
            if entry is None and namespace not in self._building:
                self._building.add(namespace)
                threading.Thread(
                    target=self._build_in_background,
                    args=(namespace, data),
                    name=f"graphctx-ann-{namespace}",
                    daemon=True,
                ).start()
            return entry

    # --- searching ---------------------------------------------------------------------
    def top_k(
        self,
        conn: sqlite3.Connection,
        namespace: str,
        data: NamespaceMatrix,
        query: Vector,
        scopes: frozenset[str],
        limit: int,
    ) -> list[tuple[int, float]] | None:
        """(chunk rowid, exact cosine) of the best visible rows found by the index, ties by
        lower rowid; None when the exact scan should answer (small visible set, no index
        yet). ``conn`` must be in the read snapshot ``data`` was read at."""
        q = np.asarray(query, dtype=np.float32)
        found = self.candidates(conn, namespace, data, q, scopes, limit)
        return None if found is None else _rescored(conn, found, q, limit)

    def candidates(
        self,
        conn: sqlite3.Connection | None,
        namespace: str,
        data: NamespaceMatrix,
        query: F32,
        scopes: frozenset[str],
        limit: int,
    ) -> Int64Array | None:
        """Row ids of ``oversample * limit`` visible candidates, not yet re-scored; None as
        for :meth:`top_k`. Without ``conn`` the index must already be at ``data``'s
        generation (nothing to refresh from)."""
        groups = data.visible_groups(scopes)
        count = sum(g.size for g in groups)
        if count < max(1, self.settings.min_visible_rows) or limit <= 0:
            return None
        entry = self._entry(namespace, data)
        if entry is None:
            return None
        allowed = np.concatenate([g.rowids for g in groups])
        k = min(count, self.settings.oversample * limit)
        with entry.lock:
            if data.generation > entry.generation:
                if conn is None:
                    raise ValueError("the index is older than the matrix: pass a connection")
                _refresh(conn, entry, data)
            return entry.index.candidates(query, allowed, k, self.settings.nprobe)


def _sample(data: NamespaceMatrix, wanted: int) -> F32:
    rowids = data.chunk_rowids
    if rowids.shape[0] > wanted:
        rng = np.random.default_rng(TRAIN_SEED)
        rowids = np.sort(rng.choice(rowids, size=wanted, replace=False))
    parts = [m for _, m in _row_batches(data, rowids)]
    return np.concatenate(parts) if parts else np.zeros((0, data.dim), dtype=np.float32)


def _row_batches(
    data: NamespaceMatrix, only: Int64Array | None
) -> Iterator[tuple[Int64Array, F32]]:
    """(row ids, float32 rows) of ``data``'s groups, all rows or only those in ``only``
    (ascending), at most ``ADD_BATCH`` rows a step."""
    for group in data.groups.values():
        picked = np.arange(group.size)
        if only is not None:
            picked = np.flatnonzero(np.isin(group.rowids, only, assume_unique=True))
        for start in range(0, picked.shape[0], ADD_BATCH):
            at = picked[start : start + ADD_BATCH]
            yield group.rowids[at], np.asarray(group.matrix[at], dtype=np.float32)


def _reuse_floor(conn: sqlite3.Connection, since_layout: int) -> int | None:
    """The lowest row id a delete after ``since_layout`` may have let SQLite hand out again."""
    try:
        row = conn.execute(
            "SELECT min(reuse_from) FROM chunk_deletes WHERE layout > ?", (since_layout,)
        ).fetchone()
    except sqlite3.OperationalError:  # a file from an older graphctx: trust no row
        return 0
    return None if row is None or row[0] is None else int(row[0])


def _refresh(conn: sqlite3.Connection, entry: _Namespace, data: NamespaceMatrix) -> None:
    """Bring ``entry`` to ``data``'s generation (its lock held)."""
    index = entry.index
    if data.layout == entry.layout:
        held = data.chunk_rowids
        fresh = held[held > entry.last_rowid]
    else:
        held = data.chunk_rowids
        floor = _reuse_floor(conn, entry.layout)
        gone = np.setdiff1d(index.indexed, held, assume_unique=True)
        if floor is not None:
            gone = np.union1d(gone, index.indexed[index.indexed >= floor])
        index.remove(gone)
        fresh = np.setdiff1d(held, index.indexed, assume_unique=True)
    for rowids, matrix in _row_batches(data, fresh):
        index.add(rowids, matrix)
    entry.generation, entry.layout, entry.last_rowid = (
        data.generation,
        data.layout,
        data.last_rowid,
    )


def _rescored(
    conn: sqlite3.Connection, found: Int64Array, q: F32, limit: int
) -> list[tuple[int, float]]:
    """The best ``limit`` of ``found`` by their exact scores, from their float32 embeddings
    in ``conn``'s snapshot; a row the snapshot no longer holds is dropped."""
    ids: list[int] = []
    blobs: list[bytes] = []
    for start in range(0, found.shape[0], ID_BATCH):
        part = found[start : start + ID_BATCH].tolist()
        marks = ", ".join("?" * len(part))
        for rowid, blob in conn.execute(
            f"SELECT id, embedding FROM chunks WHERE id IN ({marks})", part
        ):
            ids.append(int(rowid))
            blobs.append(blob)
    if not ids:
        return []
    rows = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1)
    scores = exact_scores(rows, q)
    rowids = np.asarray(ids, dtype=np.int64)
    order = np.lexsort((rowids, -scores))[:limit]
    return [(int(rowids[i]), float(scores[i])) for i in order]
