"""Write-time full-text statistics: what visible BM25 needs, kept per scope set.

Visible BM25 (:mod:`graphctx.store.bm25`) needs, over the caller's visible chunks, how many
hold each query term (``n(t)``), and the count and total length of the visible chunks that
match (``avgdl``). Every chunk belongs to exactly one ``ScopeSet`` (its document's scope set),
so the sums are kept per scope set, in the transaction that writes, re-scopes or deletes the
chunk:

- ``ScopeSet.chunk_count`` and ``ScopeSet.total_length`` (sum of ``Chunk.length``);
- ``(:Term {namespace, term, scope_sets, chunks, peaks, shortest})``, one per term of a
  namespace: the scope sets with chunks holding ``term`` and, at the same place in
  ``chunks``, how many do, in ``peaks`` the largest count of ``term`` in one of those chunks
  and in ``shortest`` the shortest of their lengths. ``peaks`` and ``shortest`` only grow
  and shrink (a chunk leaving keeps them): bounds, not exact values, for the read path's
  MaxScore (``candidate_queries``). A Term written before them has neither (nor gets them
  from a later write) until ``init_schema`` backfills it (``BACKFILL_TERM_PEAKS``).

A read adds them up over the scope sets that intersect the caller's scopes: exact, and nothing
hidden is counted. A batch's chunk changes are summed here, in Python (:class:`TextDeltas`),
and written as one ``ADJUST_SCOPE_SETS`` and one ``ADJUST_TERM_COUNTS`` statement (one row,
one node, per term the batch touches, whatever the number of scope sets it touches).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import neo4j

from graphctx.store.neo4j import queries
from graphctx.store.neo4j.rows import fetch

__all__ = ["TextDeltas", "moving_rows", "term_length", "term_repeats"]


def term_length(terms: str) -> int:
    """A chunk's BM25 length: its stored terms split at single spaces (as the read path
    counted them before lengths were stored)."""
    return len(terms.split(" "))


def term_repeats(terms: str) -> str:
    """A chunk's ``repeats``: each of its terms that occurs more than once among its stored
    terms (split at single spaces), sorted, with that count, as ``"  term count"`` entries
    (terms hold no space: two spaces start a term, one ends it), and two closing spaces. The
    read path counts a term it finds in the stored terms 1, or the count found here
    (``candidate_queries``); ``BACKFILL_REPEATS`` writes the same for an older chunk."""
    counts = Counter(term for term in terms.split(" ") if term)
    repeated = sorted((term, count) for term, count in counts.items() if count > 1)
    return "".join(f"  {term} {count}" for term, count in repeated) + "  "


@dataclass
class TextDeltas:
    """A batch's changes to the per-scope-set statistics, summed before they are written."""

    chunks: Counter[str] = field(default_factory=Counter)
    lengths: Counter[str] = field(default_factory=Counter)
    terms: Counter[tuple[str, str]] = field(default_factory=Counter)
    peaks: dict[tuple[str, str], int] = field(default_factory=dict)  # joining chunks' largest
    shortest: dict[tuple[str, str], int] = field(default_factory=dict)  # and shortest length
    scopes_of: dict[str, list[str]] = field(default_factory=dict)

    def move(self, key: str, terms: str, sign: int) -> None:
        """One chunk with stored ``terms`` joins (``sign`` = 1) or leaves (-1) the set ``key``."""
        length = term_length(terms)
        self.chunks[key] += sign
        self.lengths[key] += sign * length
        for term, count in Counter(term for term in terms.split(" ") if term).items():
            self.terms[(key, term)] += sign
            if sign > 0:
                pair = (key, term)
                self.peaks[pair] = max(self.peaks.get(pair, 0), count)
                self.shortest[pair] = min(self.shortest.get(pair, length), length)

    def scope_set_rows(self) -> list[dict[str, Any]]:
        keys = sorted(set(self.chunks) | set(self.lengths))
        return [
            {
                "key": key,
                "chunks": self.chunks[key],
                "length": self.lengths[key],
                "scopes": self.scopes_of.get(key),
            }
            for key in keys
            if self.chunks[key] or self.lengths[key]
        ]

    def term_rows(self) -> list[dict[str, Any]]:
        """One row per term whose counts move or that a chunk joins with (a chunk may replace
        one of the same terms), sorted by term: ``keys`` (sorted), ``delta`` (key -> change),
        and of the joining chunks ``peak`` (key -> largest count) and ``shortest`` (key ->
        shortest length)."""
        by_term: dict[str, dict[str, int]] = {}
        for (key, term), delta in self.terms.items():
            if delta or (key, term) in self.peaks:
                by_term.setdefault(term, {})[key] = delta
        rows = []
        for term, deltas in sorted(by_term.items()):
            joined = [key for key in deltas if (key, term) in self.peaks]
            rows.append(
                {
                    "term": term,
                    "keys": sorted(deltas),
                    "delta": deltas,
                    "peak": {key: self.peaks[(key, term)] for key in joined},
                    "shortest": {key: self.shortest[(key, term)] for key in joined},
                }
            )
        return rows

    async def apply(self, tx: neo4j.AsyncManagedTransaction, namespace: str) -> None:
        """Write the summed changes in the caller's transaction: two statements at most."""
        sets = self.scope_set_rows()
        if sets:
            await fetch(tx, queries.ADJUST_SCOPE_SETS, namespace=namespace, deltas=sets)
        terms = self.term_rows()
        if terms:
            await fetch(tx, queries.ADJUST_TERM_COUNTS, namespace=namespace, terms=terms)


def moving_rows(rows: Sequence[Mapping[str, Any]], deltas: TextDeltas) -> None:
    """``MOVING_CHUNK_TERMS`` rows: each chunk leaves its set and joins its new one."""
    for row in rows:
        terms = str(row["terms"])
        deltas.move(str(row["key"]), terms, -1)
        deltas.move(str(row["new_key"]), terms, 1)
