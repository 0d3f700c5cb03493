"""The counts full-text scoring needs on every query, kept per namespace and store generation.

Visible BM25 (:mod:`.visible_bm25`) needs ``N``, the caller's visible chunks of the namespace,
and term pruning (:func:`~graphctx.store.sqlite.fts5_query.prune_common_terms`) needs the
namespace's chunk count and each query term's document frequency. Counted in SQL on every
query these were most of the full-text stage at 100k chunks (the visible count alone scans
every chunk of the namespace). Here they are counted once per generation: chunks per scope
set (``N`` for any caller is the sum over the scope sets that meet its scopes), refreshed like
the vector matrix (appends add the new rows' counts; a delete or scope rewrite recounts, from
integers only), and document frequencies memoised per generation as queries look them up.

Nothing here mixes namespaces: each namespace has its own counts and its own memo.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphctx.store.sqlite.scope_layout import ScopeLayout, layout_count

__all__ = ["MAX_MEMOISED_TERMS", "NamespaceStats", "StatsCache"]

MAX_MEMOISED_TERMS = 50_000  # per namespace and generation; the memo starts over past it


@dataclass
class NamespaceStats:
    generation: int
    layout: int
    last_rowid: int
    sizes: dict[frozenset[str], int]  # chunks per scope set
    total: int  # every chunk of the namespace, scoped or not
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


def _count(
    conn: sqlite3.Connection, namespace: str, after: int
) -> tuple[int, dict[frozenset[str], int], int]:
    """(last row id, chunks per scope set, all chunks) of the namespace past ``after``."""
    placed = ScopeLayout(conn, namespace, after)
    sizes = {key: int(ids.shape[0]) for key, ids in placed.groups.items()}
    return placed.last_rowid, sizes, placed.unscoped + sum(sizes.values())


class StatsCache:
    """Per-namespace counts, shared by every reader thread (one lock: refreshes are cheap)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats: dict[str, NamespaceStats] = {}

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
                last, added, total = _count(conn, namespace, cached.last_rowid)
                sizes = dict(cached.sizes)
                for key, size in added.items():
                    sizes[key] = sizes.get(key, 0) + size
                fresh = NamespaceStats(generation, layout, last, sizes, cached.total + total)
            else:
                last, sizes, total = _count(conn, namespace, -1)
                fresh = NamespaceStats(generation, layout, last, sizes, total)
            if cached is None or generation > cached.generation:
                self._stats[namespace] = fresh
            return fresh

    def clear(self) -> None:
        with self._lock:
            self._stats.clear()
