"""The scope layout read from covering indexes and grouped with numpy equals the per-chunk
Python grouping it replaced, group order included, after any mix of writes, scope rewrites
and deletes, for every namespace and every starting row id."""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_change_plans import Delete, Narrow, Write, apply_change

from graphctx.store.sqlite import scope_layout
from graphctx.store.sqlite.scope_layout import ScopeLayout
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline, unit_vector

NAMESPACES = ("mine", "theirs")
SCOPES = ("a", "b", "c", "d")


def old_layout(
    conn: sqlite3.Connection, namespace: str, after: int
) -> tuple[int, int, list[tuple[frozenset[str], list[int]]]]:
    """ScopeLayout before the covering index (commit f54e549), verbatim but for returning
    (last row id, unscoped, groups in order)."""
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
    last_rowid = int(rows[-1][0]) if rows else after
    unscoped = 0
    by_key: dict[frozenset[str], list[int]] = {}
    for rowid, doc in rows:
        key = keys.get(doc)
        if key:
            by_key.setdefault(key, []).append(rowid)
        else:
            unscoped += 1
    return last_rowid, unscoped, list(by_key.items())


def as_lists(
    groups: dict[frozenset[str], npt.NDArray[np.int64]],
) -> list[tuple[frozenset[str], list[int]]]:
    for ids in groups.values():
        assert ids.dtype == np.int64
    return [(key, ids.tolist()) for key, ids in groups.items()]


writes = st.builds(
    Write,
    st.sampled_from((*NAMESPACES, "mine")),
    st.integers(0, 30),
    st.lists(st.sampled_from(("one two", "three", "four five six")), min_size=1, max_size=4).map(
        tuple
    ),
    st.frozensets(st.sampled_from(SCOPES)),  # no scopes: visible to nobody
)
plans = st.lists(
    st.one_of(
        writes,
        writes,
        writes,
        st.builds(Narrow, st.integers(0, 99)),
        st.builds(Delete, st.integers(0, 99)),
    ),
    min_size=1,
    max_size=40,
)


async def play(path: Path, plan: list[Write | Narrow | Delete]) -> int:
    store = SqliteGraphStore(path)
    await store.open()
    written: list[Write] = []
    compared = 0
    try:
        for step in plan:
            written = await apply_change(store, step, written)
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("BEGIN")
            (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()
            for namespace in (*NAMESPACES, "absent"):
                for after in range(-1, int(top) + 2):
                    placed = ScopeLayout(conn, namespace, after)
                    found = (placed.last_rowid, placed.unscoped, as_lists(placed.groups))
                    assert found == old_layout(conn, namespace, after), (namespace, after)
                    compared += 1
            conn.execute("COMMIT")
        finally:
            conn.close()
    finally:
        await store.close()
    return compared


@settings(max_examples=60, deadline=None)
@given(plan=plans)
def test_the_layout_equals_the_per_chunk_grouping(plan: list[Write | Narrow | Delete]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        assert asyncio.run(play(Path(folder) / "store.sqlite", plan)) >= 3


def test_the_layout_reads_only_covering_indexes(tmp_path: Path) -> None:
    plan: list[Write | Narrow | Delete] = [
        Write("mine", n, ("one two",), frozenset(SCOPES[: 1 + n % 3])) for n in range(5)
    ]
    asyncio.run(play(tmp_path / "store.sqlite", plan))
    conn = sqlite3.connect(tmp_path / "store.sqlite")
    for statement in (scope_layout._CHUNKS, scope_layout._SCOPE_SETS):
        steps = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}", ("mine", -1))]
        reads = [
            step
            for step in steps
            if step.startswith(("SEARCH ", "SCAN ")) and "(" not in step.split()[1]
        ]
        assert {step.split()[1] for step in reads} >= {"chunks"}, steps
        assert all("USING COVERING INDEX" in step for step in reads), steps
    conn.close()


def test_after_a_delete_both_caches_share_one_full_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[int] = []
    real_init = ScopeLayout.__init__

    def counted(self: ScopeLayout, conn: sqlite3.Connection, namespace: str, after: int) -> None:
        built.append(after)
        real_init(self, conn, namespace, after)

    async def scenario() -> list[int]:
        store = SqliteGraphStore(tmp_path / "store.sqlite")
        await store.open()
        try:
            written: list[Write] = []
            for n in range(4):
                step = Write("mine", n, ("one two", "three"), frozenset(SCOPES[: 1 + n % 3]))
                written = await apply_change(store, step, written)
            scopes = frozenset(SCOPES)
            query = unit_vector("one two")
            await store.fulltext_search("mine", "one", scopes, 5, far_deadline())
            await store.vector_search("mine", query, scopes, 5, far_deadline())
            await apply_change(store, Delete(0), written)
            monkeypatch.setattr(ScopeLayout, "__init__", counted)
            await asyncio.gather(
                store.fulltext_search("mine", "one", scopes, 5, far_deadline()),
                store.vector_search("mine", query, scopes, 5, far_deadline()),
            )
            return built
        finally:
            await store.close()

    assert asyncio.run(scenario()) == [-1]
