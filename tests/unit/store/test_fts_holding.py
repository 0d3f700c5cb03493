"""A term's matching chunks, read as one string, are exactly the row ids FTS5 matches.

``visible_bm25`` reads each query term's matches (hidden chunks included, filtered in memory
after) as one ``group_concat`` string; these tests compare it with the one-row-per-match
query it replaced, on an in-memory FTS5 table with large, sparse row ids.
"""

from __future__ import annotations

import sqlite3

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.store.sqlite.fts5_query import or_expression
from graphctx.store.sqlite.fulltext import FTS_TOKENIZER
from graphctx.store.sqlite.visible_bm25 import _holding

VOCABULARY = ["alpha", "beta", "it's", "gamma", "부당", "해고", "café", "cafe"]


def _table(rows: dict[int, list[str]]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (terms, tokenize = '{FTS_TOKENIZER}')")
    conn.executemany(
        "INSERT INTO t (rowid, terms) VALUES (?, ?)",
        [(rowid, " ".join(terms)) for rowid, terms in rows.items()],
    )
    return conn


def _one_row_per_match(conn: sqlite3.Connection, term: str) -> list[int]:
    rows = conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (or_expression([term]),))
    return [rowid for (rowid,) in rows]


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.integers(min_value=1, max_value=2**53),
        st.lists(st.sampled_from(VOCABULARY), max_size=6),
        max_size=30,
    ),
    st.sampled_from([*VOCABULARY, "absent"]),
)
def test_holding_is_every_row_id_the_match_returns(rows: dict[int, list[str]], term: str) -> None:
    conn = _table(rows)
    found = _holding(conn, "t", term)
    assert found.dtype == np.int64
    assert found.tolist() == _one_row_per_match(conn, term)


def test_a_term_no_chunk_holds_gives_no_row_ids() -> None:
    conn = _table({7: ["alpha"], 2**40: ["beta", "beta"]})
    assert _holding(conn, "t", "gamma").shape == (0,)
    assert _holding(conn, "t", "beta").tolist() == [2**40]
