"""The in-memory vector matrix and the full-text counts, refreshed in place through any mix of
appends, new versions, scope changes and deletes (row ids reused after a delete included),
equal what a fresh load reads from the same snapshot."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.errors import InvalidDocumentError
from graphctx.store.sqlite import schema
from graphctx.store.sqlite.namespace_stats import NamespaceStats, StatsCache
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.store.sqlite.vector_codes import KERNEL, RowCodes
from graphctx.store.sqlite.vector_groups import NamespaceMatrix
from graphctx.store.sqlite.vectors import VectorCache
from graphctx.testing.fixtures import make_document, paragraphs

NAMESPACE = "incremental"
DOCUMENTS = ("a", "b", "c", "d")
SCOPES = ("eng", "hr", "ops")

operations = st.lists(
    st.tuples(
        st.sampled_from(["write", "write", "delete"]),
        st.sampled_from(DOCUMENTS),
        st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=2),
        st.integers(1, 3),  # paragraphs
        st.booleans(),  # new text (a new version) or the same text (scopes only)
        st.booleans(),  # refresh after this step (else the next refresh sees several)
    ),
    min_size=1,
    max_size=12,
)


def _snapshot(
    conn: sqlite3.Connection, vectors: VectorCache, stats: StatsCache
) -> tuple[NamespaceMatrix, NamespaceStats]:
    conn.execute("BEGIN")
    try:
        (generation,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        generation = int(generation)
        return (
            vectors.matrix_for(conn, NAMESPACE, generation),
            stats.stats_for(conn, NAMESPACE, generation),
        )
    finally:
        conn.execute("COMMIT")


def _same_matrix(a: NamespaceMatrix, b: NamespaceMatrix) -> bool:
    if a.groups.keys() != b.groups.keys() or a.rows != b.rows:
        return False
    if a.rows and a.dim != b.dim:
        return False
    return all(
        np.array_equal(a.groups[k].rowids, b.groups[k].rowids)
        and a.groups[k].matrix.tobytes() == b.groups[k].matrix.tobytes()
        and a.groups[k].max_norm == b.groups[k].max_norm
        and _same_codes(a.groups[k].codes, b.groups[k].codes)
        for k in a.groups
    )


def _same_codes(a: RowCodes | None, b: RowCodes | None) -> bool:
    """The int8 copy follows the rows: the same codes and scales bit for bit, the same
    bounds to within the float64 rounding of their norms (which the bounds' slack covers)."""
    if a is None or b is None:
        return a is b
    return (
        a.codes.tobytes() == b.codes.tobytes()
        and a.scale.tobytes() == b.scale.tobytes()
        and np.allclose(a.spread, b.spread, rtol=1e-12, atol=0)
        and np.allclose(a.slack, b.slack, rtol=1e-12, atol=0)
    )


@settings(max_examples=60)
@given(operations)
def test_a_refreshed_matrix_equals_a_fresh_load_after_every_write(
    steps: list[tuple[str, str, frozenset[str], int, bool, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.sqlite"

        async def scenario() -> list[bool]:
            store = SqliteGraphStore(path)
            await store.open()
            conn = schema.connect(path, read_only=True)
            vectors, stats = VectorCache(), StatsCache()
            texts: dict[str, int] = {}
            outcomes = []
            try:
                _snapshot(conn, vectors, stats)
                for n, (kind, doc, scopes, parts, new_text, look) in enumerate(steps):
                    if kind == "delete":
                        await store.delete_document(NAMESPACE, doc)
                        texts.pop(doc, None)
                    else:
                        if new_text or doc not in texts:
                            texts[doc] = n
                        text = "\n\n".join(f"{doc} {texts[doc]} part {p}" for p in range(parts))
                        # Vectors differ per step: a reused row id must not keep an old vector.
                        chunks = paragraphs(text, vector_seed=f"{doc}-{n}")
                        document = make_document(NAMESPACE, doc, text, set(scopes))
                        # Widening older versions' scopes is refused (no write): fine here.
                        with contextlib.suppress(InvalidDocumentError):
                            await store.write_document(document, chunks, "test-embedder")
                    if not look and n < len(steps) - 1:
                        continue
                    kept = _snapshot(conn, vectors, stats)
                    fresh = _snapshot(conn, VectorCache(), StatsCache())
                    held = [g.codes is not None for g in kept[0].groups.values()]
                    outcomes.append(
                        _same_matrix(kept[0], fresh[0])
                        and (kept[1].sizes, kept[1].total) == (fresh[1].sizes, fresh[1].total)
                        and all(h == (KERNEL is not None) for h in held)
                    )
            finally:
                conn.close()
                await store.close()
            return outcomes

        assert all(asyncio.run(scenario()))
