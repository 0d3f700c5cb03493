"""Neo4j's write-time full-text statistics always equal a recount of the chunks.

Visible BM25 on Neo4j reads N, the total length and n(t) from ``ScopeSet`` and ``Term``
(``store/neo4j/text_statistics.py``) instead of counting the matches, so every write, new
version, re-scope and delete must keep them exact, and a graph written before they existed,
or with its term counts in the older ``TermCount`` layout, must be refused by the read path
until ``init_schema`` has added or converted them.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.errors import ConfigurationError, GraphctxError
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.neo4j.rows import fetch
from graphctx.store.records import ChunkHit, DocumentWrite, NewChunk
from graphctx.testing.fixtures import make_document, unit_vector

pytestmark = pytest.mark.neo4j

WORDS = ["payment", "gateway", "kafka", "broker", "salary", "급여", "결제"]
SCOPES = ["eng", "hr", "oncall"]
SOON_S = 30.0

STORED = """
MATCH (s:ScopeSet {namespace: $namespace})
RETURN s.key AS key, s.chunk_count AS chunks, s.total_length AS length, COLLECT {
    MATCH (t:Term {namespace: $namespace})
    UNWIND range(0, size(t.scope_sets) - 1) AS i
    WITH t, i
    WHERE t.scope_sets[i] = s.key
    RETURN [t.term, t.chunks[i]]
} AS terms
"""
TERMS_WITHOUT_COUNTS = """
MATCH (t:Term {namespace: $namespace})
WHERE size(t.chunks) = 0 OR size(t.chunks) <> size(t.scope_sets)
   OR any(n IN t.chunks WHERE n <= 0)
RETURN count(t) AS wrong
"""
RECOUNTED = """
MATCH (c:Chunk {namespace: $namespace})
WITH c.acl_key AS key, count(c) AS chunks, sum(size(split(c.terms, ' '))) AS length,
     collect(c) AS members
RETURN key, chunks, length, COLLECT {
    UNWIND members AS c
    UNWIND split(c.terms, ' ') AS term
    WITH DISTINCT c, term
    WHERE term <> ''
    WITH term, count(c) AS held
    RETURN [term, held]
} AS terms
"""
STRIP_STATISTICS = (
    "DROP CONSTRAINT graphctx_term_count_key IF EXISTS",
    "DROP CONSTRAINT graphctx_term_key IF EXISTS",
    "MATCH (t:TermCount) DELETE t",
    "MATCH (t:Term) DELETE t",
    "MATCH (c:Chunk) REMOVE c.length",
    "MATCH (s:ScopeSet) REMOVE s.total_length",
)


def soon() -> float:
    return time.monotonic() + SOON_S


def by_key(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int, dict[str, int]]]:
    return {
        str(r["key"]): (
            int(r["chunks"]),
            int(r["length"]),
            {str(term): int(n) for term, n in r["terms"] if term is not None},
        )
        for r in rows
    }


def statistics(
    runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    params = {"namespace": namespace}
    stored = runner.run(store.run_read(STORED, params, soon()))
    recounted = runner.run(store.run_read(RECOUNTED, params, soon()))
    wrong = runner.run(store.run_read(TERMS_WITHOUT_COUNTS, params, soon()))
    assert wrong[0]["wrong"] == 0  # no empty, ragged or non-positive Term left behind
    return by_key(stored), by_key(recounted)


operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("write"),
            st.sampled_from(["a", "b", "c"]),
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
            st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=2),
        ),
        st.tuples(st.just("delete"), st.sampled_from(["a", "b", "c"])),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations)
def test_write_time_statistics_equal_a_recount_after_writes_versions_rescopes_and_deletes(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore, ops: list[tuple[Any, ...]]
) -> None:
    namespace = "s" + uuid.uuid4().hex[:12]
    texts: dict[str, str] = {}
    for op in ops:
        if op[0] == "delete":
            neo4j_runner.run(neo4j_store.delete_document(namespace, op[1]))
            texts.pop(op[1], None)
            continue
        _, doc_id, text, scopes = op
        # The same text with other scopes re-scopes every version; new text adds a version.
        text = texts.get(doc_id, text) if len(scopes) == 1 else text
        doc = make_document(namespace, doc_id, text, set(scopes))
        chunk = NewChunk(0, 0, len(text), text, unit_vector(f"{namespace}/{doc_id}/{text}"))
        try:
            neo4j_runner.run(neo4j_store.write_document(doc, [chunk], "test"))
        except GraphctxError:  # a new version may not widen older versions' scopes
            pass
        else:
            texts[doc_id] = text
        stored, recounted = statistics(neo4j_runner, neo4j_store, namespace)
        assert stored == recounted


def stripping(
    statement: str,
) -> Callable[[neo4j.AsyncManagedTransaction], Awaitable[list[dict[str, Any]]]]:
    async def work(tx: neo4j.AsyncManagedTransaction) -> list[dict[str, Any]]:
        return await fetch(tx, statement)

    return work


def test_a_graph_without_statistics_is_refused_until_init_adds_them(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "m" + uuid.uuid4().hex[:12]
    for i, text in enumerate(["payment gateway outage", "kafka broker payment", "salary 급여"]):
        doc = make_document(namespace, f"d{i}", text, {"eng"})
        chunk = NewChunk(0, 0, len(text), text, unit_vector(f"{namespace}/{i}"))
        neo4j_runner.run(neo4j_store.write_document(doc, [chunk], "test"))

    def search() -> Coroutine[Any, Any, list[ChunkHit]]:
        return neo4j_store.fulltext_search(
            namespace, "payment broker", frozenset({"eng"}), 5, soon()
        )

    before = neo4j_runner.run(search())
    for statement in STRIP_STATISTICS:  # the graph as an older graphctx wrote it
        neo4j_runner.run(neo4j_store._write(stripping(statement), "strip"))
    with pytest.raises(ConfigurationError):
        neo4j_runner.run(search())

    report = neo4j_runner.run(neo4j_store.init_schema())

    assert "graphctx_term_count_key" in report.created
    assert "graphctx_term_key" in report.created
    assert neo4j_runner.run(search()) == before
    stored, recounted = statistics(neo4j_runner, neo4j_store, namespace)
    assert stored == recounted


# The term counts as graphctx wrote them before Term: one TermCount per scope set and term.
TO_LEGACY_TERM_COUNTS = (
    """
MATCH (t:Term)
UNWIND range(0, size(t.scope_sets) - 1) AS i
CREATE (:TermCount {scope_set: t.scope_sets[i], term: t.term, chunks: t.chunks[i]})
""",
    "MATCH (t:Term) DELETE t",
    "DROP CONSTRAINT graphctx_term_key IF EXISTS",
)
LEGACY_LEFT = "MATCH (t:TermCount) RETURN count(t) AS left"


def test_term_counts_in_the_older_layout_are_refused_until_init_converts_them(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "l" + uuid.uuid4().hex[:12]
    texts = ["payment gateway outage", "kafka broker payment", "salary 급여 payment", "급여 결제"]
    writes = []
    for i, text in enumerate(texts):
        doc = make_document(namespace, f"d{i}", text, [{"eng"}, {"hr"}, {"eng", "hr"}][i % 3])
        chunk = NewChunk(0, 0, len(text), text, unit_vector(f"{namespace}/{i}"))
        writes.append(DocumentWrite(doc, (chunk,)))
    neo4j_runner.run(neo4j_store.write_documents(namespace, writes, "test"))

    def search(scopes: frozenset[str]) -> Coroutine[Any, Any, list[ChunkHit]]:
        return neo4j_store.fulltext_search(namespace, "payment 급여 broker", scopes, 5, soon())

    views = [frozenset({"eng"}), frozenset({"hr"}), frozenset({"eng", "hr"})]
    before = [neo4j_runner.run(search(scopes)) for scopes in views]
    counted = statistics(neo4j_runner, neo4j_store, namespace)[0]
    for statement in TO_LEGACY_TERM_COUNTS:
        neo4j_runner.run(neo4j_store._write(stripping(statement), "to the older layout"))
    with pytest.raises(ConfigurationError):
        neo4j_runner.run(search(views[0]))

    report = neo4j_runner.run(neo4j_store.init_schema())

    assert report.created == ("graphctx_term_key",)
    left = neo4j_runner.run(neo4j_store.run_read(LEGACY_LEFT, {}, soon()))
    assert left[0]["left"] == 0
    assert [neo4j_runner.run(search(scopes)) for scopes in views] == before
    stored, recounted = statistics(neo4j_runner, neo4j_store, namespace)
    assert stored == recounted == counted


batches = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
            st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=2),
            st.booleans(),  # keep the document's current text (a re-scope when scopes differ)
        ),
        min_size=1,
        max_size=6,
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=batches)
def test_batched_writes_keep_the_statistics_equal_to_a_recount(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore, batches: list[list[Any]]
) -> None:
    """write_documents sums a batch's deltas (new chunks, versions, re-scopes of every version,
    a document repeated in the batch) before writing them in one statement each."""
    namespace = "b" + uuid.uuid4().hex[:12]
    texts: dict[str, str] = {}
    for batch in batches:
        writes = []
        for doc_id, text, scopes, keep in batch:
            text = texts.get(doc_id, text) if keep else text
            texts[doc_id] = text
            doc = make_document(namespace, doc_id, text, set(scopes))
            chunk = NewChunk(0, 0, len(text), text, unit_vector(f"{namespace}/{doc_id}/{text}"))
            writes.append(DocumentWrite(doc, (chunk,)))
        results = neo4j_runner.run(neo4j_store.write_documents(namespace, writes, "test"))
        assert len(results) == len(writes)
        stored, recounted = statistics(neo4j_runner, neo4j_store, namespace)
        assert stored == recounted
