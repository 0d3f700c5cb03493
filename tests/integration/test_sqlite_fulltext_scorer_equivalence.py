"""The embedded full-text stage gives exactly what the scorer it replaced gave.

The store now finds visible matches through its cached scope sets and counts each term only
in the chunks FTS5 found holding it (:mod:`graphctx.store.sqlite.visible_bm25`). The scorer
it replaced, kept here as the reference, joined every match with the chunk and scope tables
in SQL and counted every query term in every visible match's stored terms. On random
corpora (adjacent repeats, accents, apostrophes, Korean, two namespaces), random writes,
re-scopes and deletes between queries (so the cached counts are refreshed both ways), and
random queries and scopes, both must give the same hits, in the same order, with the same
scores.
"""

from __future__ import annotations

import asyncio
import math
import shutil
import sqlite3
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fulltext_corpus import PROJECTS, QUESTIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_change_plans import Delete, Narrow, Write, apply_change

from graphctx.store.bm25 import Candidate, rank_by_visible_bm25
from graphctx.store.sqlite import fulltext
from graphctx.store.sqlite.fts5_query import or_expression, prune_common_terms
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline
from graphctx.text.lexical import query_terms

NAMESPACES = ("mine", "theirs")
SCOPES = ("a", "b", "c")
WORDS = (
    "ledger", "ledgers", "zirconium", "payment", "café", "cafe", "don't", "don", "t",
    "Über", "uber", "해고", "해고는", "근로자", "x", "xx", "ledger-ledger",
)  # fmt: skip


def reference_search(
    conn: sqlite3.Connection, namespace: str, query: str, scopes: frozenset[str], limit: int
) -> list[tuple[str, float]]:
    """The scorer before the cached-visibility change, on its own counts (all in SQL)."""
    terms = query_terms(query)
    table = fulltext.table_of(conn, namespace)
    if not terms or table is None:
        return []
    marks = ", ".join("?" * len(terms))
    frequency = dict(
        conn.execute(f"SELECT term, doc FROM {table}_vocab WHERE term IN ({marks})", terms)
    )
    (total,) = conn.execute(
        "SELECT count(*) FROM chunks WHERE namespace = ?", (namespace,)
    ).fetchone()
    kept = prune_common_terms(terms, frequency, total)
    expression = or_expression(kept)
    if expression is None:
        return []
    scope_marks = ", ".join("?" * len(scopes))
    scope_clause = f"c.doc IN (SELECT doc FROM document_scopes WHERE scope IN ({scope_marks}))"
    (visible,) = conn.execute(
        f"SELECT count(*) FROM chunks c WHERE c.namespace = ? AND {scope_clause}",
        (namespace, *sorted(scopes)),
    ).fetchone()
    rows = conn.execute(
        f"""SELECT c.id, c.chunk_id, f.terms
            FROM {table} f JOIN chunks c ON c.id = f.rowid
            WHERE {table} MATCH ? AND {scope_clause}""",
        [expression, *sorted(scopes)],
    ).fetchall()
    needles = [f" {term} " for term in kept]
    candidates = []
    for rowid, chunk_id, indexed in rows:
        text = str(indexed)
        spaced = " " + text.replace(" ", "  ") + " "
        frequencies = tuple(spaced.count(needle) for needle in needles)
        candidates.append(Candidate(int(rowid), str(chunk_id), text.count(" ") + 1, frequencies))
    return rank_by_visible_bm25(candidates, visible, limit)


@dataclass(frozen=True)
class Ask:
    namespace: str
    query: str
    scopes: frozenset[str]
    limit: int


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1)
writes = st.builds(
    Write,
    st.sampled_from(NAMESPACES),
    st.integers(0, 30),
    st.lists(texts, min_size=1, max_size=3).map(tuple),
    scope_sets,
)
asks = st.builds(
    Ask,
    st.sampled_from(NAMESPACES),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    scope_sets,
    st.integers(1, 12),
)
steps = st.lists(
    st.one_of(
        writes,
        writes,
        asks,
        asks,
        st.builds(Narrow, st.integers(0, 100)),
        st.builds(Delete, st.integers(0, 100)),
    ),
    min_size=1,
    max_size=25,
)


def same_ranking(found: Sequence[tuple[str, float]], expected: Sequence[tuple[str, float]]) -> bool:
    return [c for c, _ in found] == [c for c, _ in expected] and all(
        math.isclose(s, t, rel_tol=1e-12, abs_tol=1e-12)
        for (_, s), (_, t) in zip(found, expected, strict=True)
    )


async def play(path: Path, plan: list[object]) -> int:
    store = SqliteGraphStore(path)
    await store.open()
    reference = sqlite3.connect(path, isolation_level=None)
    written: list[Write] = []
    asked = 0
    try:
        for step in plan:
            if isinstance(step, Write | Narrow | Delete):
                written = await apply_change(store, step, written)
            elif isinstance(step, Ask):
                hits = await store.fulltext_search(
                    step.namespace, step.query, step.scopes, step.limit, far_deadline()
                )
                found = [(h.chunk_id, h.score) for h in hits]
                expected = reference_search(
                    reference, step.namespace, step.query, step.scopes, step.limit
                )
                assert same_ranking(found, expected), (step, found, expected)
                asked += 1
    finally:
        reference.close()
        await store.close()
    return asked


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps)
def test_the_store_ranks_exactly_as_the_reference_scorer(plan: list[object]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(play(Path(folder) / "store.sqlite", plan))


def test_a_ranking_against_the_reference_really_compares() -> None:
    """The property above would pass trivially if every search came back empty."""
    plan: list[object] = [
        Write("mine", 1, ("ledger ledger zirconium", "café don't"), frozenset({"a"})),
        Write("mine", 2, ("ledger cafe", "해고는 근로자"), frozenset({"a", "b"})),
        Write("mine", 3, ("ledger ledger ledger",), frozenset({"c"})),
        Ask("mine", "ledger cafe don't", frozenset({"a"}), 10),
        Narrow(1),
        Ask("mine", "ledger", frozenset({"b"}), 10),
        Delete(0),
        Ask("mine", "ledger zirconium", frozenset({"a", "c"}), 10),
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite"
        assert asyncio.run(play(path, plan)) == 3
        conn = sqlite3.connect(path)
        try:
            hits = reference_search(conn, "mine", "ledger zirconium", frozenset({"a", "c"}), 10)
        finally:
            conn.close()
        assert [chunk for chunk, _ in hits] == ["d3@1#0"]  # d1 deleted, d2 narrowed to b


V1_STORE = Path(__file__).parent / "data" / "store-v1.sqlite"


async def compare_on(path: Path) -> int:
    store = SqliteGraphStore(path)
    await store.open()  # migrates the file: one full-text table per namespace
    reference = sqlite3.connect(path, isolation_level=None)
    compared = 0
    try:
        for namespace in PROJECTS:
            for scopes in ({"public"}, {"public", "secret"}, {"secret"}):
                for query in QUESTIONS:
                    hits = await store.fulltext_search(
                        namespace, query, frozenset(scopes), 10, far_deadline()
                    )
                    found = [(h.chunk_id, h.score) for h in hits]
                    expected = reference_search(reference, namespace, query, frozenset(scopes), 10)
                    assert same_ranking(found, expected), (namespace, scopes, query)
                    compared += bool(found)
    finally:
        reference.close()
        await store.close()
    return compared


def test_a_store_written_by_an_older_version_ranks_as_the_reference(tmp_path: Path) -> None:
    copy = tmp_path / "old.sqlite"
    shutil.copyfile(V1_STORE, copy)
    assert asyncio.run(compare_on(copy)) > 0
