"""The counts full-text scoring needs on every query, kept per namespace and store generation.

Visible BM25 (:mod:`.visible_bm25`) needs ``N``, the caller's visible chunks of the namespace,
and term pruning (:func:`~graphctx.store.sqlite.fts5_query.prune_common_terms`) needs the
namespace's chunk count and each query term's document frequency. Counted in SQL on every
query these were most of the full-text stage at 100k chunks (the visible count alone scans
every chunk of the namespace). Here they are counted once per generation: chunks per scope
set (``N`` for any caller is the sum over the scope sets that meet its scopes), refreshed like
the vector matrix (appends add the new rows' counts; a delete or scope rewrite recounts, from
integers only), and document frequencies memoised per generation as queries look them up.

The same refresh keeps every chunk's row id with the index of its scope set
(:class:`RowScopes`), so full-text search tells a caller's visible matches from hidden ones
in memory instead of joining every match with the chunk and scope tables in SQL, and beside
them each chunk's length (``chunk_term_counts``), so BM25's average length over the visible
matches needs no chunk read.

Nothing here mixes namespaces: each namespace has its own counts and its own memo.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from graphctx.errors import StoreCorruptError
from graphctx.store.sqlite.scope_layout import FullLayouts, ScopeLayout, layout_count

__all__ = [
    "MAX_MEMOISED_TERMS",
    "SLOTS_SPAN_FACTOR",
    "NamespaceStats",
    "RowScopes",
    "StatsCache",
]

MAX_MEMOISED_TERMS = 50_000  # per namespace and generation; the memo starts over past it


@dataclass(frozen=True)
class RowScopes:
    """The scoped chunks of a namespace: row ids ascending, each with its scope set's index
    in ``keys``. Chunks with no scopes are not here (visible to nobody).

    ``slots`` finds a row id's place without a binary search: ``slots[rowid - first]`` is its
    index in ``rowids``, -1 for a row id not held. It spans ``first`` to the last row id, so
    it is kept only while that span is at most ``SLOTS_SPAN_FACTOR`` times the rows held
    (one namespace written alone: the span is the rows); a namespace whose row ids are spread
    among other namespaces' gets None and a binary search. Every lookup gives the same
    answer either way."""

    keys: tuple[frozenset[str], ...]
    rowids: npt.NDArray[np.int64]
    key_index: npt.NDArray[np.int32]
    first: int = 0
    slots: npt.NDArray[np.int32] | None = None

    @staticmethod
    def of(placed: ScopeLayout, before: RowScopes | None = None) -> RowScopes:
        """``placed``'s chunks (all past ``before``'s last row id) appended to ``before``."""
        keys = list(before.keys) if before is not None else []
        position = {key: n for n, key in enumerate(keys)}
        ids: list[npt.NDArray[np.int64]] = [] if before is None else [before.rowids]
        index: list[npt.NDArray[np.int32]] = [] if before is None else [before.key_index]
        added_ids: list[npt.NDArray[np.int64]] = []
        added_index: list[npt.NDArray[np.int32]] = []
        for key, rows in placed.groups.items():
            if key not in position:
                position[key] = len(keys)
                keys.append(key)
            added_ids.append(rows)
            added_index.append(np.full(rows.shape[0], position[key], dtype=np.int32))
        if added_ids:
            new_ids = np.concatenate(added_ids)
            order = np.argsort(new_ids, kind="stable")
            ids.append(new_ids[order])
            index.append(np.concatenate(added_index)[order])
        rowids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        first = int(rowids[0]) if rowids.shape[0] else 0
        return RowScopes(
            tuple(keys),
            rowids,
            np.concatenate(index) if index else np.zeros(0, dtype=np.int32),
            first,
            _slots(rowids, first),
        )

    def visible_among(
        self, rowids: npt.NDArray[np.int64], scopes: frozenset[str]
    ) -> npt.NDArray[np.int64]:
        """The row ids of ``rowids`` whose scope set meets ``scopes``, ascending; any row id
        not held here (unscoped, another namespace, unknown) is left out."""
        if rowids.shape[0] == 0 or self.rowids.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        meets = np.fromiter(
            (not key.isdisjoint(scopes) for key in self.keys), dtype=np.bool_, count=len(self.keys)
        )
        found, held = self._find(rowids)
        visible = held & meets[self.key_index[found]]
        return np.sort(rowids[visible])

    def positions(self, rowids: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
        """Where each of ``rowids`` (all held here) sits in :attr:`rowids`."""
        if self.slots is None:
            return np.searchsorted(self.rowids, rowids)
        return self.slots[rowids - self.first].astype(np.intp)

    def union(
        self, parts: Sequence[npt.NDArray[np.int64]]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp]]:
        """The row ids in any of ``parts`` (each held here), ascending and once each, with
        their places in :attr:`rowids`."""
        marked = np.zeros(self.rowids.shape[0], dtype=np.bool_)
        for part in parts:
            marked[self.positions(part)] = True
        at = np.flatnonzero(marked)
        return self.rowids[at], at

    def _find(
        self, rowids: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
        """For each of ``rowids``: an index into :attr:`rowids` (any valid one when not held)
        and whether it is held."""
        if self.slots is None:
            found = np.minimum(np.searchsorted(self.rowids, rowids), self.rowids.shape[0] - 1)
            return found, self.rowids[found] == rowids
        offset = rowids - self.first
        inside = (offset >= 0) & (offset < self.slots.shape[0])
        slot = self.slots[np.where(inside, offset, 0)]
        held = inside & (slot >= 0)
        return np.where(held, slot, 0).astype(np.intp), held


SLOTS_SPAN_FACTOR = 4  # ``slots`` costs 4 bytes per row id spanned; ``rowids`` 8 per row


def _slots(rowids: npt.NDArray[np.int64], first: int) -> npt.NDArray[np.int32] | None:
    """Each row id's index in ``rowids`` (ascending, starting at ``first``) by ``rowid -
    first``, -1 between them; None when the span is too sparse to be worth it."""
    if rowids.shape[0] == 0:
        return None
    span = int(rowids[-1]) - first + 1
    if span > SLOTS_SPAN_FACTOR * rowids.shape[0] or rowids.shape[0] >= 2**31:
        return None
    slots = np.full(span, -1, dtype=np.int32)
    slots[rowids - first] = np.arange(rowids.shape[0], dtype=np.int32)
    return slots


@dataclass
class NamespaceStats:
    generation: int
    layout: int
    last_rowid: int
    sizes: dict[frozenset[str], int]  # chunks per scope set
    total: int  # every chunk of the namespace, scoped or not
    rows: RowScopes
    lengths: npt.NDArray[np.int64]  # each chunk of ``rows`` (same order): its BM25 length
    frequencies: dict[str, int] = field(default_factory=dict)  # memo: term -> chunks holding it

    def visible(self, scopes: frozenset[str]) -> int:
        return sum(size for key, size in self.sizes.items() if not key.isdisjoint(scopes))

    def document_frequency(
        self, conn: sqlite3.Connection, table: str, terms: Sequence[str]
    ) -> dict[str, int]:
        """Chunks of ``table`` holding each term, from the memo or ``table``'s vocabulary.
        ``conn``'s read transaction must be at this object's generation."""
        missing = [t for t in terms if t not in self.frequencies]
        if missing:
            if len(self.frequencies) > MAX_MEMOISED_TERMS:
                self.frequencies.clear()
            marks = ", ".join("?" * len(missing))
            found = dict(
                conn.execute(
                    f"SELECT term, doc FROM {table}_vocab WHERE term IN ({marks})", missing
                ).fetchall()
            )
            for term in missing:
                self.frequencies[term] = int(found.get(term, 0))
        return {t: self.frequencies[t] for t in terms}


def _count(placed: ScopeLayout) -> tuple[dict[frozenset[str], int], int]:
    """(chunks per scope set, all chunks) of a layout."""
    sizes = {key: int(ids.shape[0]) for key, ids in placed.groups.items()}
    return sizes, placed.unscoped + sum(sizes.values())


def _lengths(
    conn: sqlite3.Connection, namespace: str, after: int, rowids: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """The recorded lengths of ``rowids`` (ascending chunk row ids of the namespace past
    ``after``)."""
    found = conn.execute(
        """SELECT t.id, t.terms FROM chunk_term_counts t JOIN chunks c ON c.id = t.id
           WHERE c.namespace = ? AND c.id > ? ORDER BY t.id""",
        (namespace, after),
    ).fetchall()
    ids = np.fromiter((row[0] for row in found), dtype=np.int64, count=len(found))
    counts = np.fromiter((row[1] for row in found), dtype=np.int64, count=len(found))
    if rowids.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    at = np.minimum(np.searchsorted(ids, rowids), max(0, ids.shape[0] - 1))
    if ids.shape[0] == 0 or not np.array_equal(ids[at], rowids):
        raise StoreCorruptError(f"chunks of namespace {namespace!r} have no recorded length")
    return counts[at]


class StatsCache:
    """Per-namespace counts, shared by every reader thread (one lock: refreshes are cheap)."""

    def __init__(self, layouts: FullLayouts | None = None) -> None:
        self._lock = threading.Lock()
        self._stats: dict[str, NamespaceStats] = {}
        self._layouts = FullLayouts() if layouts is None else layouts

    def stats_for(
        self, conn: sqlite3.Connection, namespace: str, generation: int
    ) -> NamespaceStats:
        """The counts as of ``generation`` (``conn``'s read transaction is at it). A reader
        on an older snapshot gets its own, uncached."""
        with self._lock:
            cached = self._stats.get(namespace)
            if cached is not None and cached.generation == generation:
                return cached
            layout = layout_count(conn)
            if cached is not None and cached.generation < generation and cached.layout == layout:
                placed = ScopeLayout(conn, namespace, cached.last_rowid)
                added, total = _count(placed)
                sizes = dict(cached.sizes)
                for key, size in added.items():
                    sizes[key] = sizes.get(key, 0) + size
                rows = RowScopes.of(placed, cached.rows)
                added_rows = rows.rowids[cached.rows.rowids.shape[0] :]
                lengths = np.concatenate(
                    [cached.lengths, _lengths(conn, namespace, cached.last_rowid, added_rows)]
                )
                fresh = NamespaceStats(
                    generation,
                    layout,
                    placed.last_rowid,
                    sizes,
                    cached.total + total,
                    rows,
                    lengths,
                )
            else:
                placed = self._layouts.of(conn, namespace, generation)
                sizes, total = _count(placed)
                rows = RowScopes.of(placed)
                lengths = _lengths(conn, namespace, -1, rows.rowids)
                fresh = NamespaceStats(
                    generation, layout, placed.last_rowid, sizes, total, rows, lengths
                )
            if cached is None or generation > cached.generation:
                self._stats[namespace] = fresh
            return fresh

    def clear(self) -> None:
        with self._lock:
            self._stats.clear()
