"""The bare baseline of ``graphctx bench store``: what the two searches cost with nothing else.

Per query, on the same SQLite file and the same queries as graphctx, in the same run:

- the query embedding (the same embedder graphctx uses);
- the same FTS5 MATCH graphctx runs (its query terms after pruning, built outside the clock),
  ranked by FTS5's own ``bm25()``: ``ORDER BY rank LIMIT 50``;
- an unfiltered exact numpy top-50 over every embedding of the namespace (one float32 matrix
  read before the clock starts; no scopes, no re-scoring).

No ACL, no fusion, no fetch of texts, no packing, no gate: graphctx's p50 over this one's is
the price of everything graphctx does on top of the two searches.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from graphctx.embed.port import Embedder
from graphctx.store.sqlite.fts5_query import or_expression, prune_common_terms
from graphctx.text.lexical import query_terms

__all__ = ["BareBaseline", "BareTimes"]

TOP_K = 50


@dataclass(frozen=True)
class BareTimes:
    embed_ms: float
    fulltext_ms: float
    vector_ms: float

    @property
    def total_ms(self) -> float:
        return self.embed_ms + self.fulltext_ms + self.vector_ms


class BareBaseline:
    """One namespace of a store file, searched without graphctx."""

    def __init__(self, path: Path, namespace: str) -> None:
        self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._namespace = namespace
        row = self._conn.execute(
            "SELECT id FROM fulltext_tables WHERE namespace = ?", (namespace,)
        ).fetchone()
        self._table = f"chunk_fts_{int(row[0])}"
        rows = self._conn.execute(
            "SELECT id, embedding FROM chunks WHERE namespace = ? ORDER BY id", (namespace,)
        ).fetchall()
        self._ids = np.asarray([r[0] for r in rows], dtype=np.int64)
        self._matrix: npt.NDArray[np.float32] = np.frombuffer(
            b"".join(r[1] for r in rows), dtype=np.float32
        ).reshape(len(rows), -1)
        (self._total,) = self._conn.execute(
            "SELECT count(*) FROM chunks WHERE namespace = ?", (namespace,)
        ).fetchone()

    def expression(self, query: str) -> str | None:
        """The MATCH graphctx sends for ``query`` (terms pruned by the namespace's counts)."""
        terms = query_terms(query)
        if not terms:
            return None
        marks = ", ".join("?" * len(terms))
        frequency = dict(
            self._conn.execute(
                f"SELECT term, doc FROM {self._table}_vocab WHERE term IN ({marks})", terms
            )
        )
        return or_expression(prune_common_terms(terms, frequency, int(self._total)))

    def search(self, embedder: Embedder, query: str, expression: str | None) -> BareTimes:
        started = time.perf_counter()
        vector = np.asarray(embedder.embed_query(query), dtype=np.float32)
        embedded = time.perf_counter()
        if expression is not None:
            self._conn.execute(
                f"SELECT rowid FROM {self._table} WHERE {self._table} MATCH ?"
                f" ORDER BY rank LIMIT {TOP_K}",
                (expression,),
            ).fetchall()
        searched = time.perf_counter()
        scores = self._matrix @ vector
        k = min(TOP_K, scores.shape[0])
        if k:
            best = np.argpartition(-scores, k - 1)[:k]
            self._ids[best[np.argsort(-scores[best])]].tolist()
        done = time.perf_counter()
        return BareTimes(
            (embedded - started) * 1000, (searched - embedded) * 1000, (done - searched) * 1000
        )

    def close(self) -> None:
        self._conn.close()
