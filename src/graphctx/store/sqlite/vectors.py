"""The per-namespace embedding matrices of the embedded store, kept in step with its writes.

The embeddings live in SQLite (one float32 BLOB per chunk); :class:`VectorCache` keeps each
namespace's as scope groups in memory (:mod:`.vector_groups`), refreshed when the store's
write generation changes, and :mod:`.vector_scan` searches them.

Refresh, by what changed since the cached matrix (the store's ``layout`` count in ``meta``
moves on every delete and scope rewrite):

- only appends (layout unchanged): just the new rows are read, and written into their
  groups' spare capacity. Measured at 100k x 512 on the shared 2-core machine, re-reading
  every embedding after each commit took 2.4-3.9 s under the cache lock.
- deletes or scope rewrites: the chunk ids and scope sets of the namespace (integers, no
  embeddings) are read and compared with the cached groups; unchanged groups are kept as
  they are, changed ones rebuilt from the rows already in memory, and only rows the matrix
  never held are read from SQLite. SQLite may give a deleted chunk's row id to a new chunk:
  every delete records the lowest row id that can be handed out again (``chunk_deletes``,
  written by :func:`~graphctx.store.sqlite.writes.delete_document_versions`), and cached rows
  at or past it are read again.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from graphctx.store.sqlite import vector_codes
from graphctx.store.sqlite.scope_layout import FullLayouts, ScopeLayout, layout_count
from graphctx.store.sqlite.vector_groups import (
    F32,
    Int64Array,
    NamespaceMatrix,
    ScopeGroup,
    group_index,
    max_norm_of,
    with_capacity,
)
from graphctx.store.sqlite.vector_scan import top_k_visible

__all__ = ["NamespaceMatrix", "VectorCache", "top_k_visible"]

READ_BATCH = 4096  # embeddings stacked per step of a load (bounds its transient memory)
ID_BATCH = 500  # row ids per ``IN (...)`` read


class VectorCache:
    """Per-namespace embedding matrices, shared by every reader thread."""

    def __init__(self, layouts: FullLayouts | None = None) -> None:
        self._layouts = FullLayouts() if layouts is None else layouts
        self._locks_lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}  # one per namespace: a reload in one
        self._matrices: dict[str, NamespaceMatrix] = {}  # never stalls searches in another

    def _lock_for(self, namespace: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(namespace, threading.Lock())

    def matrix_for(
        self, conn: sqlite3.Connection, namespace: str, generation: int
    ) -> NamespaceMatrix:
        """The matrix as of ``generation``, read through ``conn`` (whose read transaction
        must be at that generation). A reader whose snapshot predates the cached matrix gets
        its own older one and leaves the cache alone: the newer matrix may hold chunks its
        snapshot cannot resolve. Only the cached (newest) matrix is ever refreshed from,
        under the lock, so appends never write over rows another matrix shows."""
        with self._lock_for(namespace):
            cached = self._matrices.get(namespace)
            if cached is not None and cached.generation == generation:
                return cached
            layout = layout_count(conn)
            if cached is not None and cached.generation < generation:
                if cached.layout == layout:
                    loaded = _extend(conn, namespace, cached, generation)
                else:
                    placed = self._layouts.of(conn, namespace, generation)
                    loaded = _rebuild(conn, namespace, cached, generation, layout, placed)
            else:
                placed = self._layouts.of(conn, namespace, generation)
                loaded = load(conn, namespace, generation, layout, placed)
            if cached is None or generation > cached.generation:
                self._matrices[namespace] = loaded
            return loaded

    def clear(self) -> None:
        with self._locks_lock:
            self._matrices.clear()


# --- reading ------------------------------------------------------------------------------
def _reuse_floor(conn: sqlite3.Connection, since_layout: int) -> int | None:
    """The lowest chunk row id a delete after ``since_layout`` may have freed for reuse."""
    try:
        row = conn.execute(
            "SELECT min(reuse_from) FROM chunk_deletes WHERE layout > ?", (since_layout,)
        ).fetchone()
    except sqlite3.OperationalError:  # a file opened by an older graphctx: trust no row
        return 0
    return None if row is None or row[0] is None else int(row[0])


def _rows(conn: sqlite3.Connection, namespace: str, after: int) -> Iterator[tuple[int, bytes]]:
    """(row id, embedding) of the namespace's chunks past ``after``, ascending, streamed."""
    return iter(
        conn.execute(
            "SELECT id, embedding FROM chunks WHERE namespace = ? AND id > ? ORDER BY id",
            (namespace, after),
        )
    )


def _rows_by_id(conn: sqlite3.Connection, rowids: Int64Array) -> Iterator[tuple[int, bytes]]:
    for start in range(0, rowids.shape[0], ID_BATCH):
        part = rowids[start : start + ID_BATCH].tolist()
        marks = ", ".join("?" * len(part))
        yield from conn.execute(f"SELECT id, embedding FROM chunks WHERE id IN ({marks})", part)


def _fill(
    targets: Mapping[frozenset[str], tuple[F32, Int64Array, int]],
    rows: Iterable[tuple[int, bytes]],
) -> None:
    """Write each streamed (row id, embedding) into ``targets[key] = (buffer, rowids, offset)``
    at ``offset`` + its place in ``rowids``; rows no target holds are skipped."""
    keys = list(targets)
    if not keys:
        return
    all_ids = np.concatenate([targets[k][1] for k in keys])
    owner = np.concatenate([np.full(targets[k][1].shape[0], n) for n, k in enumerate(keys)])
    slot = np.concatenate([np.arange(targets[k][1].shape[0]) + targets[k][2] for k in keys])
    order = np.argsort(all_ids, kind="stable")
    all_ids, owner, slot = all_ids[order], owner[order], slot[order]
    stream = iter(rows)
    while batch := list(itertools.islice(stream, READ_BATCH)):
        ids = np.fromiter((r[0] for r in batch), dtype=np.int64, count=len(batch))
        at = np.searchsorted(all_ids, ids).clip(max=max(0, all_ids.shape[0] - 1))
        held = all_ids[at] == ids
        if not held.any():
            continue
        matrix = np.frombuffer(
            b"".join(r[1] for r, h in zip(batch, held.tolist(), strict=True) if h),
            dtype=np.float32,
        )
        matrix = matrix.reshape(int(held.sum()), -1)
        at = at[held]
        for n in np.unique(owner[at]).tolist():
            mine = owner[at] == n
            targets[keys[n]][0][slot[at][mine]] = matrix[mine]


def _dim_of(conn: sqlite3.Connection, namespace: str) -> int:
    row = conn.execute(
        "SELECT length(embedding) FROM chunks WHERE namespace = ? LIMIT 1", (namespace,)
    ).fetchone()
    return 0 if row is None else int(row[0]) // 4


def _finish(
    generation: int,
    layout: int,
    dim: int,
    last_rowid: int,
    groups: dict[frozenset[str], ScopeGroup],
) -> NamespaceMatrix:
    return NamespaceMatrix(generation, layout, dim, last_rowid, groups, group_index(groups))


def _group(key: frozenset[str], rowids: Int64Array, buffer: F32) -> ScopeGroup:
    matrix = buffer[: rowids.shape[0]]
    codes = vector_codes.encode(matrix, buffer.shape[0])
    return ScopeGroup(key, rowids, matrix, buffer, max_norm_of(matrix), codes)


# --- the three refreshes ------------------------------------------------------------------
def load(
    conn: sqlite3.Connection, namespace: str, generation: int, layout: int, placed: ScopeLayout
) -> NamespaceMatrix:
    """Every visible chunk of the namespace (``placed``: its full layout), read from scratch."""
    dim = _dim_of(conn, namespace) if placed.groups else 0
    targets = {k: (with_capacity(ids.shape[0], dim), ids, 0) for k, ids in placed.groups.items()}
    _fill(targets, _rows(conn, namespace, -1))
    groups = {k: _group(k, ids, targets[k][0]) for k, ids in placed.groups.items()}
    return _finish(generation, layout, dim, placed.last_rowid, groups)


def _extend(
    conn: sqlite3.Connection, namespace: str, cached: NamespaceMatrix, generation: int
) -> NamespaceMatrix:
    """``cached`` plus the chunks added since; nothing was deleted or re-scoped since."""
    placed = ScopeLayout(conn, namespace, cached.last_rowid)
    if not placed.groups:
        return _finish(
            generation, cached.layout, cached.dim, placed.last_rowid, dict(cached.groups)
        )
    dim = cached.dim or _dim_of(conn, namespace)
    groups = dict(cached.groups)
    targets: dict[frozenset[str], tuple[F32, Int64Array, int]] = {}
    for key, new_ids in placed.groups.items():
        old = groups.get(key)
        size = 0 if old is None else old.size
        total = size + new_ids.shape[0]
        if old is not None and old.buffer.shape[0] >= total:
            buffer = old.buffer  # rows past ``size`` belong to no matrix yet
        else:
            buffer = with_capacity(total, dim)
            if old is not None:
                buffer[:size] = old.matrix
        targets[key] = (buffer, new_ids, size)
    _fill(targets, _rows(conn, namespace, cached.last_rowid))
    for key, (buffer, new_ids, size) in targets.items():
        old = groups.get(key)
        if old is None:
            groups[key] = _group(key, new_ids, buffer)
            continue
        rowids = np.concatenate([old.rowids, new_ids])
        added = buffer[size : rowids.shape[0]]
        groups[key] = ScopeGroup(
            key,
            rowids,
            buffer[: rowids.shape[0]],
            buffer,
            max(max_norm_of(added), old.max_norm),
            _extended_codes(old, added, buffer.shape[0]),
        )
    return _finish(generation, cached.layout, dim, placed.last_rowid, groups)


def _extended_codes(old: ScopeGroup, added: F32, capacity: int) -> vector_codes.RowCodes | None:
    """``old``'s int8 copy plus ``added``'s rows: written into its spare room past its rows
    when there is enough, else into a new buffer of ``capacity`` rows."""
    if old.codes is None:
        return None
    room = old.codes.buffer
    if room.shape[0] < old.size + added.shape[0]:
        room = vector_codes.with_room(capacity, added.shape[1])
    return vector_codes.extended(old.codes, old.size, added, room)


def _rebuild(
    conn: sqlite3.Connection,
    namespace: str,
    cached: NamespaceMatrix,
    generation: int,
    layout: int,
    placed: ScopeLayout,
) -> NamespaceMatrix:
    """``cached`` after deletes or scope rewrites (``placed``: the full layout now): unchanged
    groups kept, changed ones rebuilt from memory, only rows the matrix never held (or whose
    row id may be reused) read."""
    floor = _reuse_floor(conn, cached.layout)
    dim = cached.dim or (_dim_of(conn, namespace) if placed.groups else 0)
    sources = list(cached.groups.values())
    trusted = [g.rowids if floor is None else g.rowids[g.rowids < floor] for g in sources]
    empty = np.zeros(0, dtype=np.int64)
    held_ids = np.concatenate([empty, *trusted])
    held_owner = np.concatenate([empty, *(np.full(t.shape[0], n) for n, t in enumerate(trusted))])
    held_slot = np.concatenate([empty, *(np.arange(t.shape[0]) for t in trusted)])
    order = np.argsort(held_ids, kind="stable")
    held_ids, held_owner, held_slot = held_ids[order], held_owner[order], held_slot[order]
    groups: dict[frozenset[str], ScopeGroup] = {}
    for key, ids in placed.groups.items():
        old = cached.groups.get(key)
        unchanged = old is not None and np.array_equal(old.rowids, ids)
        if old is not None and unchanged and (floor is None or int(ids[-1]) < floor):
            groups[key] = old
            continue
        buffer = with_capacity(ids.shape[0], dim)
        in_memory = np.zeros(ids.shape[0], dtype=np.bool_)
        copies: list[vector_codes.CodeCopy] = []
        if held_ids.shape[0]:
            at = np.searchsorted(held_ids, ids).clip(max=held_ids.shape[0] - 1)
            in_memory = held_ids[at] == ids
            for n in np.unique(held_owner[at[in_memory]]).tolist():
                mine = in_memory & (held_owner[at] == n)
                slots = held_slot[at[mine]]
                buffer[np.flatnonzero(mine)] = sources[n].matrix[slots]
                copies.append((np.flatnonzero(mine), sources[n].codes, slots))
        if not in_memory.all():
            _fill({key: (buffer, ids, 0)}, _rows_by_id(conn, ids[~in_memory]))
        matrix = buffer[: ids.shape[0]]
        codes = vector_codes.assembled(matrix, buffer.shape[0], copies)
        groups[key] = ScopeGroup(key, ids, matrix, buffer, max_norm_of(matrix), codes)
    return _finish(generation, layout, dim, placed.last_rowid, groups)
