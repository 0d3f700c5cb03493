"""The lazy full-text ranking gives exactly what counting every candidate gave.

:func:`graphctx.store.sqlite.visible_bm25.rank_visible` now takes every candidate's length
from the namespace's cache, learns which candidates truly hold a query term from the second
(irregular-terms) table, and reads only the candidates that can still reach the top
``limit`` (MaxScore). The ranking it replaced, kept here verbatim as the oracle, read and
counted every candidate. On random corpora full of terms FTS5 tokenizes differently from our
analysis (apostrophes, accents, circled digits, full-width letters, mixed scripts), random
writes, re-scopes and deletes (so the cached lengths are appended and reloaded), random term
lists, scopes, limits and read batch sizes, both must give the same ``(chunk_id, score)``
lists, floats equal.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

import numpy as np
import numpy.typing as npt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_change_plans import Delete, Narrow, Write, apply_change

from graphctx.store.bm25 import CandidateTable, best_rows
from graphctx.store.sqlite import fulltext, visible_bm25
from graphctx.store.sqlite.fts5_query import prune_common_terms
from graphctx.store.sqlite.namespace_stats import RowScopes, StatsCache
from graphctx.store.sqlite.scope_layout import ScopeLayout
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.store.sqlite.visible_bm25 import _holding, _with_chunk_ids, occurrences
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs
from graphctx.text.lexical import query_terms

NAMESPACES = ("mine", "theirs")
SCOPES = ("a", "b", "c")
WORDS = (
    "ledger", "ledgers", "don't", "don", "t", "n't", "isn't", "n", "josé", "jose", "née",
    "nee", "①", "1", "②", "café", "cafe", "Über", "uber", "über", "해고", "해고는", "中文",
    "中", "x", "x1", "straße", "strasse", "a_b", "a", "b",
    "\uff46\uff55\uff4c\uff4c", "full", "it\u2019s", "it", "s", "日本語",
    "ｶﾀｶﾅ", "ǆ", "Ⅻ", "ﬁ", "fi",
)  # fmt: skip
ODD_LETTERS = "abn'\u2019éü①中해ﬁ_"


def old_rank_visible(
    conn: sqlite3.Connection,
    table: str,
    terms: Sequence[str],
    rows: RowScopes,
    scopes: frozenset[str],
    visible: int,
    limit: int,
) -> list[tuple[str, float]]:
    """rank_visible before lazy reading (commit 7e852e3), verbatim."""
    holders = [rows.visible_among(_holding(conn, table, term), scopes) for term in terms]
    shown = np.unique(np.concatenate(holders)) if holders else np.zeros(0, dtype=np.int64)
    if shown.shape[0] == 0:
        return []
    rowids = shown.tolist()
    stored = dict(
        conn.execute(
            f"SELECT rowid, terms FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),),
        ).fetchall()
    )
    padded = [f" {stored[rowid]} " for rowid in rowids]
    frequencies = np.zeros((len(rowids), len(terms)), dtype=np.int64)
    for column, (term, holding) in enumerate(zip(terms, holders, strict=True)):
        at = np.searchsorted(shown, holding)
        frequencies[at, column] = [occurrences(padded[row], term) for row in at.tolist()]
    lengths = np.fromiter((text.count(" ") - 1 for text in padded), np.int64, len(padded))
    pool = CandidateTable(shown, lengths, frequencies)
    best = best_rows(pool, pool.statistics(), visible, limit)
    return _with_chunk_ids(conn, [(rowids[row], score) for row, score in best])


def old_search(
    conn: sqlite3.Connection, namespace: str, terms: list[str], scopes: frozenset[str], limit: int
) -> list[tuple[str, float]]:
    """fulltext.search as it was, on counts made from scratch."""
    table = fulltext.table_of(conn, namespace)
    if table is None:
        return []
    rows = RowScopes.of(ScopeLayout(conn, namespace, -1))
    (total,) = conn.execute(
        "SELECT count(*) FROM chunks WHERE namespace = ?", (namespace,)
    ).fetchone()
    frequency = {
        t: int(n)
        for t, n in conn.execute(
            f"SELECT term, doc FROM {table}_vocab WHERE term IN ({', '.join('?' * len(terms))})",
            terms,
        )
    }
    kept = prune_common_terms(terms, frequency, int(total))
    if not kept:
        return []
    visible = int(
        sum(1 for key in rows.key_index.tolist() if not rows.keys[key].isdisjoint(scopes))
    )
    return old_rank_visible(conn, table, kept, rows, scopes, visible, limit)


@dataclass(frozen=True)
class Ask:
    namespace: str
    words: tuple[str, ...]
    scopes: frozenset[str]
    limit: int


odd_words = st.text(st.sampled_from(ODD_LETTERS), min_size=1, max_size=4)
words = st.one_of(st.sampled_from(WORDS), st.sampled_from(WORDS), odd_words)
texts = st.lists(words, min_size=1, max_size=10).map(" ".join)
scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1)
namespaces = st.sampled_from((*NAMESPACES, "mine", "mine"))  # mostly one, sometimes both
writes = st.builds(
    Write,
    namespaces,
    st.integers(0, 40),
    st.lists(texts, min_size=1, max_size=4).map(tuple),
    st.frozensets(st.sampled_from(SCOPES)),  # no scopes: visible to nobody
)
asks = st.builds(
    Ask,
    namespaces,
    st.lists(words, min_size=1, max_size=5).map(tuple),
    scope_sets,
    st.integers(0, 15),
)
steps = st.tuples(
    st.lists(writes, min_size=8, max_size=40),  # a corpus first, then anything
    st.lists(
        st.one_of(
            writes,
            asks,
            asks,
            asks,
            asks,
            st.builds(Narrow, st.integers(0, 100)),
            st.builds(Delete, st.integers(0, 100)),
        ),
        min_size=4,
        max_size=30,
    ),
).map(lambda parts: [*parts[0], *parts[1]])


def exact_scores_and_bounds(
    conn: sqlite3.Connection, table: str, terms: Sequence[str], ask: Ask, *, counted: bool
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Every candidate's exact score (all read and counted) and the bound MaxScore gives it
    unread, for the candidates holding every term they matched (all but the doubtful ones,
    which are always read): ``counted``, with the repeated-terms table's knowledge (a term
    not repeated is held once), else as if every term it matched were repeated."""
    (generation,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    stats = StatsCache().stats_for(conn, ask.namespace, int(generation))
    holders = [stats.rows.visible_among(_holding(conn, table, t), ask.scopes) for t in terms]
    shown, places = stats.rows.union(holders)
    if shown.shape[0] == 0:
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.float64)
    pool = visible_bm25._Pool(conn, table, terms, shown, stats.lengths[places])
    for column, holding in enumerate(holders):
        pool.matched[np.searchsorted(shown, holding), column] = True
    repeated = pool.matched.copy()
    if counted:
        repeated[:] = False
        found = visible_bm25._also_matching(
            conn, visible_bm25.repeated_table(table), terms, holders
        )
        for column, holding in enumerate(found):
            repeated[np.searchsorted(shown, holding), column] = True
    pool.read(np.arange(shown.shape[0]))
    statistics = pool.statistics()
    visible = stats.visible(ask.scopes)
    table_of_all = CandidateTable(shown, pool.lengths, pool.frequencies)
    scores = np.zeros(shown.shape[0], dtype=np.float64)
    for row, score in best_rows(table_of_all, statistics, visible, shown.shape[0]):
        scores[row] = score
    certain = ~(pool.matched & (pool.frequencies == 0)).any(axis=1)
    return scores[certain], pool.bounds(statistics, visible, repeated)[certain]


def exhaustive(conn: sqlite3.Connection, namespace: str, ask: Ask) -> tuple[int, int]:
    """Compare rank_visible itself with the oracle on the ask's raw terms (none pruned, absent
    ones included) over counts made from scratch; (searches that found something, rows)."""
    table = fulltext.table_of(conn, namespace)
    if table is None:
        return 0, 0
    terms = list(dict.fromkeys(t for word in ask.words for t in query_terms(word)))
    if not terms:
        return 0, 0
    (generation,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    stats = StatsCache().stats_for(conn, namespace, int(generation))
    visible = stats.visible(ask.scopes)
    found = visible_bm25.rank_visible(
        conn, table, terms, stats.rows, stats.lengths, ask.scopes, visible, ask.limit
    )
    expected = old_rank_visible(conn, table, terms, stats.rows, ask.scopes, visible, ask.limit)
    assert found == expected, (ask, terms, found, expected)
    for counted in (False, True):
        scores, bounds = exact_scores_and_bounds(conn, table, terms, ask, counted=counted)
        assert (bounds * (1 + visible_bm25._BOUND_SLACK) >= scores).all(), (ask, scores, bounds)
    return int(bool(found)), len(found)


async def play(path: Path, plan: list[object]) -> tuple[int, int, int]:
    """Run ``plan``, comparing at every ask and, at the end, over a sweep of the words; (asks
    that found something, sweep searches that did, rows compared)."""
    store = SqliteGraphStore(path)
    await store.open()
    reference = sqlite3.connect(path, isolation_level=None)
    written: list[Write] = []
    compared = swept = rows = 0
    try:
        for step in plan:
            if isinstance(step, Write | Narrow | Delete):
                written = await apply_change(store, step, written)
            elif isinstance(step, Ask):
                query = " ".join(step.words)
                hits = await store.fulltext_search(
                    step.namespace, query, step.scopes, step.limit, far_deadline()
                )
                found = [(h.chunk_id, h.score) for h in hits]
                reference.execute("BEGIN")
                try:
                    terms = query_terms(query)
                    expected = (
                        old_search(reference, step.namespace, terms, step.scopes, step.limit)
                        if terms
                        else []
                    )
                    assert found == expected, (step, found, expected)
                    found_any, found_rows = exhaustive(reference, step.namespace, step)
                finally:
                    reference.execute("COMMIT")
                compared += found_any
                rows += found_rows
        reference.execute("BEGIN")
        try:
            for namespace in NAMESPACES:
                for scopes in (frozenset({"a"}), frozenset(SCOPES)):
                    for start in range(0, len(WORDS), 3):
                        for limit in (1, 4):
                            ask = Ask(namespace, WORDS[start : start + 3], scopes, limit)
                            found_any, found_rows = exhaustive(reference, namespace, ask)
                            swept += found_any
                            rows += found_rows
        finally:
            reference.execute("COMMIT")
    finally:
        reference.close()
        await store.close()
    return compared, swept, rows


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps, st.sampled_from([1, 2, 3, 64]))
def test_lazy_ranking_is_exactly_the_exhaustive_one(plan: list[object], batch: int) -> None:
    with tempfile.TemporaryDirectory() as folder, patch.object(visible_bm25, "_MIN_BATCH", batch):
        asyncio.run(play(Path(folder) / "store.sqlite", plan))


class CountingConnection(sqlite3.Connection):
    """Records how many stored-terms rows each ``json_each`` read asked for."""

    asked: list[int]

    def execute(self, sql: str, parameters: object = (), /) -> sqlite3.Cursor:
        if "SELECT rowid, terms FROM" in sql and isinstance(parameters, tuple):
            self.asked.append(len(json.loads(str(parameters[0]))))
        return super().execute(sql, parameters)  # type: ignore[arg-type]


def _many_candidates(path: Path) -> None:
    async def write() -> None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            for n in range(300):
                text = "ledger " * (1 + n % 4) + ("zirconium josé" if n % 50 == 0 else "don't")
                document = make_document("mine", f"d{n}", text, {"a"})
                await store.write_document(document, paragraphs(text), "test-embedder")
        finally:
            await store.close()

    asyncio.run(write())


def test_only_candidates_that_can_reach_the_top_are_read() -> None:
    """300 candidates hold "ledger"; 6 also hold the rare "zirconium": the top 5 need not read
    the rest. The old ranking read all 300, and the answer is the same."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite"
        _many_candidates(path)
        conn = sqlite3.connect(path, isolation_level=None, factory=CountingConnection)
        conn.asked = []
        table = fulltext.table_of(conn, "mine")
        assert table is not None
        (generation,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        stats = StatsCache().stats_for(conn, "mine", int(generation))
        terms = ["ledger", "zirconium", "jose"]
        visible = stats.visible(frozenset({"a"}))
        found = visible_bm25.rank_visible(
            conn, table, terms, stats.rows, stats.lengths, frozenset({"a"}), visible, 5
        )
        read = sum(conn.asked)
        expected = old_rank_visible(conn, table, terms, stats.rows, frozenset({"a"}), visible, 5)
        conn.close()
    assert found == expected
    assert [chunk for chunk, _ in found][:1] == ["d0@1#0"]
    assert sum(1 for chunk, _ in found if int(chunk[1:].split("@")[0]) % 50 == 0) == 5
    # The six "jose" holders (irregular josé) are read to count them, then one batch of
    # the best bounds: far fewer than the 300 the exhaustive ranking reads.
    assert read <= 6 + 64 < 300


def test_candidates_holding_each_term_once_are_counted_without_reading() -> None:
    """300 chunks hold "ledger" once among other words: none is read (the base ranking read
    at least its first batch of 64), and the answer is the exhaustive one."""

    async def write(path: Path) -> None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            for n in range(300):
                text = f"ledger entry{n} " + "word " * (n % 7)
                document = make_document("mine", f"d{n}", text, {"a"})
                await store.write_document(document, paragraphs(text), "test-embedder")
        finally:
            await store.close()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite"
        asyncio.run(write(path))
        conn = sqlite3.connect(path, isolation_level=None, factory=CountingConnection)
        conn.asked = []
        table = fulltext.table_of(conn, "mine")
        assert table is not None
        (generation,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        stats = StatsCache().stats_for(conn, "mine", int(generation))
        scopes = frozenset({"a"})
        visible = stats.visible(scopes)
        found = visible_bm25.rank_visible(
            conn, table, ["ledger"], stats.rows, stats.lengths, scopes, visible, 5
        )
        read = sum(conn.asked)
        expected = old_rank_visible(conn, table, ["ledger"], stats.rows, scopes, visible, 5)
        conn.close()
    assert found == expected
    assert len(found) == 5
    assert read == 0


def test_the_property_compares_real_rankings() -> None:
    plan: list[object] = [
        Write("mine", 1, ("ledger don't josé", "don t jose"), frozenset({"a"})),
        Write("mine", 2, ("ledger ledger ① 1", "née nee n't"), frozenset({"a", "b"})),
        Write("mine", 3, ("ledger 中文 해고는",), frozenset({"c"})),
        Ask("mine", ("ledger", "don", "jose", "t"), frozenset({"a"}), 2),
        Narrow(1),
        Ask("mine", ("nee", "1", "n"), frozenset({"b"}), 10),
        Delete(0),
        Ask("mine", ("ledger", "中文"), frozenset({"a", "c"}), 1),
    ]
    with tempfile.TemporaryDirectory() as folder, patch.object(visible_bm25, "_MIN_BATCH", 1):
        compared, swept, rows = asyncio.run(play(Path(folder) / "store.sqlite", plan))
    assert compared == 3
    assert swept > 0
    assert rows >= 4


def test_the_bound_is_reached_by_a_chunk_of_one_term_repeated() -> None:
    """A chunk made only of "ledger" holds it as often as its length allows: its bound is its
    score, so any tighter bound would leave a true top row unread. The others (another word
    takes a place) score strictly below their bound."""
    texts = [" ".join(["ledger"] * k) for k in range(1, 6)]
    texts += [" ".join(["ledger"] * k + ["zinc"]) for k in range(1, 6)]

    async def write(path: Path) -> None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            for n, text in enumerate(texts):
                document = make_document("mine", f"d{n}", text, {"a"})
                await store.write_document(document, paragraphs(text), "test-embedder")
        finally:
            await store.close()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite"
        asyncio.run(write(path))
        conn = sqlite3.connect(path, isolation_level=None)
        table = fulltext.table_of(conn, "mine")
        assert table is not None
        ask = Ask("mine", ("ledger",), frozenset({"a"}), 1)
        scores, bounds = exact_scores_and_bounds(conn, table, ["ledger"], ask, counted=False)
        counted = exact_scores_and_bounds(conn, table, ["ledger"], ask, counted=True)
        conn.close()
    assert scores.shape == (10,)
    np.testing.assert_allclose(bounds[:5], scores[:5], rtol=1e-12)
    assert (bounds[5:] > scores[5:] * (1 + 1e-6)).all()
    # Held once ("ledger" and "ledger zinc"): the bound is the score.
    np.testing.assert_array_equal(counted[0], scores)
    np.testing.assert_allclose(counted[1][[0, 5]], scores[[0, 5]], rtol=1e-12)
