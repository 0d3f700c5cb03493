"""A namespace's row lookup answers the same with its slot table as by binary search.

:class:`graphctx.store.sqlite.namespace_stats.RowScopes` finds a chunk row id's place through
``slots`` (one entry per row id spanned) when the namespace's row ids are dense enough, and
by binary search otherwise. Full-text search asks it which of a term's matches the caller may
see and where each candidate sits; these tests check every answer against a plain set
reading of the rows, on dense and on sparse row ids (both lookups), appended layouts, and
lookups of row ids it does not hold (unscoped chunks, other namespaces', ids past either end).
"""

from __future__ import annotations

import sqlite3

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.store.sqlite.namespace_stats import SLOTS_SPAN_FACTOR, RowScopes
from graphctx.store.sqlite.scope_layout import ScopeLayout

SCOPES = ("a", "b", "c")
NAMESPACE = "mine"


def _store(chunks: dict[int, tuple[str, frozenset[str]]]) -> sqlite3.Connection:
    """The two tables ScopeLayout reads: chunk row id -> (namespace, its document's scopes);
    one document per chunk."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, namespace TEXT, doc INTEGER)")
    conn.execute("CREATE TABLE document_scopes (doc INTEGER, scope TEXT)")
    for rowid, (namespace, scopes) in chunks.items():
        conn.execute("INSERT INTO chunks VALUES (?, ?, ?)", (rowid, namespace, rowid))
        conn.executemany(
            "INSERT INTO document_scopes VALUES (?, ?)", [(rowid, s) for s in sorted(scopes)]
        )
    return conn


chunk_maps = st.dictionaries(
    st.integers(1, 400),
    st.tuples(
        st.sampled_from((NAMESPACE, NAMESPACE, NAMESPACE, "theirs")),
        st.frozensets(st.sampled_from(SCOPES)),  # empty: visible to nobody, not held
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(
    chunk_maps,
    st.integers(0, 400),
    st.lists(st.integers(-5, 410), max_size=40),
    st.frozensets(st.sampled_from(SCOPES), min_size=1),
    st.booleans(),
)
def test_row_lookups_match_a_plain_reading_of_the_rows(
    chunks: dict[int, tuple[str, frozenset[str]]],
    split: int,
    asked: list[int],
    scopes: frozenset[str],
    spread: bool,
) -> None:
    if spread:  # row ids far apart: too sparse for a slot table unless only one is held
        chunks = {rowid * 10 * SLOTS_SPAN_FACTOR: value for rowid, value in chunks.items()}
        asked = [rowid * 10 * SLOTS_SPAN_FACTOR for rowid in asked]
        split *= 10 * SLOTS_SPAN_FACTOR
    conn = _store(chunks)
    whole = RowScopes.of(ScopeLayout(conn, NAMESPACE, -1))
    appended = RowScopes.of(
        ScopeLayout(conn, NAMESPACE, split),
        RowScopes.of(_first_part(conn, split)),
    )
    held = {
        rowid: key
        for rowid, (namespace, key) in sorted(chunks.items())
        if namespace == NAMESPACE and key
    }
    ids = np.asarray(sorted(set(asked)), dtype=np.int64)
    for rows in (whole, appended):
        assert rows.rowids.tolist() == list(held)
        assert [rows.keys[k] for k in rows.key_index.tolist()] == list(held.values())
        span = max(held) - min(held) + 1 if held else 0
        assert (rows.slots is not None) == (0 < span <= SLOTS_SPAN_FACTOR * len(held))
        visible = [r for r in ids.tolist() if r in held and not held[r].isdisjoint(scopes)]
        found = rows.visible_among(ids, scopes)
        assert found.dtype == np.int64
        assert found.tolist() == visible
        mine = np.asarray([r for r in ids.tolist() if r in held], dtype=np.int64)
        assert rows.positions(mine).tolist() == [list(held).index(r) for r in mine.tolist()]
        parts = [mine[::2], mine[1::2], mine[:3]]
        shown, places = rows.union(parts)
        assert shown.tolist() == mine.tolist()
        assert rows.rowids[places].tolist() == mine.tolist()


def _first_part(conn: sqlite3.Connection, split: int) -> ScopeLayout:
    """The layout of the namespace's chunks up to ``split`` (what a cache held before)."""
    layout = ScopeLayout(conn, NAMESPACE, -1)
    layout.groups = {
        key: ids[ids <= split] for key, ids in layout.groups.items() if (ids <= split).any()
    }
    return layout
