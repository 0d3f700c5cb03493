"""Neo4j's Term nodes bound each scope set's term counts and lengths, and MaxScore uses them.

Beside a term's per-scope-set chunk counts, a ``Term`` keeps the largest count of the term in
one chunk of that set (``peaks``) and the shortest length of those chunks (``shortest``),
written with the chunks (``text_statistics``). They only grow / shrink, so after a delete or
a new version they stay bounds. The candidate statement bounds a term's BM25 contribution
with them over the visible sets: the hits and scores stay those of visible BM25 over a
recount of the stored terms. A Term written before them reads the same on the plain bound,
and ``init_schema`` adds them.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import neo4j
import pytest

from graphctx.store.bm25 import Candidate, rank_by_visible_bm25
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.neo4j.rows import fetch
from graphctx.store.records import ChunkHit, NewChunk
from graphctx.testing.fixtures import make_document, unit_vector
from graphctx.text.lexical import query_terms

pytestmark = pytest.mark.neo4j

SCOPES = ["eng", "hr", "ops"]
WORDS = ["payment", "gateway", "kafka", "broker", "outage", "salary", "급여", "ledger", "2"]
QUERIES = ["payment gateway", "kafka broker outage", "salary 급여 ledger 2", "gateway 2 outage"]
GRANTS = [frozenset({"eng"}), frozenset({"hr", "ops"}), frozenset(SCOPES)]
LIMIT = 3  # well below the visible matches, so MaxScore prunes
CHUNKS = """
MATCH (d:Document {namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk)
RETURN c.chunk_id AS chunk_id, c.acl_key AS key, c.terms AS terms, c.length AS length,
       d.scopes AS scopes
ORDER BY chunk_id
"""
TERMS = """
MATCH (t:Term {namespace: $namespace})
RETURN t.term AS term, t.scope_sets AS keys, t.chunks AS chunks, t.peaks AS peaks,
       t.shortest AS shortest
ORDER BY term
"""
STRIP_PEAKS = """
MATCH (t:Term {namespace: $namespace})
REMOVE t.peaks, t.shortest
"""


def soon() -> float:
    return time.monotonic() + 30.0


def texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def write(runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str, docs: list[str]) -> None:
    for i, text in enumerate(docs):
        doc = make_document(namespace, f"d{i}", text, {SCOPES[i % 3], SCOPES[i % 2]})
        chunk = NewChunk(0, 0, len(text), text, unit_vector(f"{namespace}/{i}/{text}"))
        runner.run(store.write_document(doc, [chunk], "test"))


def read(runner: asyncio.Runner, store: Neo4jGraphStore, statement: str, namespace: str) -> Any:
    return runner.run(store.run_read(statement, {"namespace": namespace}, soon()))


def recounted_peaks(rows: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int]]:
    """(term, scope set) -> (largest count in one chunk, shortest length) of the chunks now."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for row in rows:
        for term, count in Counter(t for t in str(row["terms"]).split(" ") if t).items():
            pair = (term, str(row["key"]))
            peak, shortest = out.get(pair, (0, int(row["length"])))
            out[pair] = (max(peak, count), min(shortest, int(row["length"])))
    return out


def stored_peaks(terms: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int]]:
    return {
        (str(t["term"]), str(key)): (int(peak), int(shortest))
        for t in terms
        for key, peak, shortest in zip(t["keys"], t["peaks"], t["shortest"], strict=True)
    }


def recounted_hits(
    rows: list[dict[str, Any]], query: str, scopes: frozenset[str]
) -> list[ChunkHit]:
    """Visible BM25 over the visible chunks, each term counted in the stored terms."""
    terms = query_terms(query)
    visible = [r for r in rows if scopes & set(r["scopes"])]
    pool = []
    for row in visible:
        counts = Counter(str(row["terms"]).split(" "))
        frequencies = tuple(counts[t] for t in terms)
        if any(frequencies):
            pool.append(Candidate(row["chunk_id"], row["chunk_id"], row["length"], frequencies))
    return [ChunkHit(c, s) for c, s in rank_by_visible_bm25(pool, len(visible), LIMIT)]


def searches(
    runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str
) -> dict[tuple[str, frozenset[str]], list[ChunkHit]]:
    return {
        (query, scopes): runner.run(store.fulltext_search(namespace, query, scopes, LIMIT, soon()))
        for query in QUERIES
        for scopes in GRANTS
    }


def assert_hits_are_a_recounts(
    runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str
) -> dict[tuple[str, frozenset[str]], list[ChunkHit]]:
    rows = read(runner, store, CHUNKS, namespace)
    found = searches(runner, store, namespace)
    for (query, scopes), hits in found.items():
        assert hits == recounted_hits(rows, query, scopes), (query, scopes)
        assert hits
    return found


def test_term_peaks_equal_a_recount_and_stay_bounds_after_versions_and_deletes(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "p" + uuid.uuid4().hex[:12]
    write(neo4j_runner, neo4j_store, namespace, texts(1, 30))
    rows = read(neo4j_runner, neo4j_store, CHUNKS, namespace)
    terms = read(neo4j_runner, neo4j_store, TERMS, namespace)
    assert stored_peaks(terms) == recounted_peaks(rows)
    assert_hits_are_a_recounts(neo4j_runner, neo4j_store, namespace)

    # New, shorter versions with fewer repeats, and deletes: the peaks stay bounds.
    write(neo4j_runner, neo4j_store, namespace, texts(2, 10))
    for i in range(20, 30, 3):
        neo4j_runner.run(neo4j_store.delete_document(namespace, f"d{i}"))
    rows = read(neo4j_runner, neo4j_store, CHUNKS, namespace)
    stored = stored_peaks(read(neo4j_runner, neo4j_store, TERMS, namespace))
    recounted = recounted_peaks(rows)
    assert stored.keys() == recounted.keys()
    for pair, (peak, shortest) in recounted.items():
        assert stored[pair][0] >= peak, pair
        assert stored[pair][1] <= shortest, pair
    assert stored != recounted  # some are stale now, and the hits are still exact
    assert_hits_are_a_recounts(neo4j_runner, neo4j_store, namespace)


def stripping(namespace: str) -> Callable[[neo4j.AsyncManagedTransaction], Awaitable[Any]]:
    async def work(tx: neo4j.AsyncManagedTransaction) -> Any:
        return await fetch(tx, STRIP_PEAKS, namespace=namespace)

    return work


def test_terms_without_peaks_read_the_same_and_init_adds_them(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "q" + uuid.uuid4().hex[:12]
    write(neo4j_runner, neo4j_store, namespace, texts(3, 24))
    before = assert_hits_are_a_recounts(neo4j_runner, neo4j_store, namespace)
    neo4j_runner.run(neo4j_store._write(stripping(namespace), "strip"))

    assert searches(neo4j_runner, neo4j_store, namespace) == before
    write(neo4j_runner, neo4j_store, namespace, ["payment payment payment kafka"])  # a write
    terms = read(neo4j_runner, neo4j_store, TERMS, namespace)
    # ... adds no peaks to a Term holding chunks it has not seen (both terms were there).
    assert all(t["peaks"] is None and t["shortest"] is None for t in terms)
    written = assert_hits_are_a_recounts(neo4j_runner, neo4j_store, namespace)

    neo4j_runner.run(neo4j_store.init_schema())

    rows = read(neo4j_runner, neo4j_store, CHUNKS, namespace)
    assert stored_peaks(read(neo4j_runner, neo4j_store, TERMS, namespace)) == recounted_peaks(rows)
    assert searches(neo4j_runner, neo4j_store, namespace) == written
