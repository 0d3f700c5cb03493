"""Neo4j's candidate statement counts a chunk's terms from its write-time ``repeats``.

A term held once counts 1; a term held more often has its count in the chunk's ``repeats``
(``text_statistics.term_repeats``). The counts, and so the hits and scores, are those of a
recount of the stored terms (visible BM25 in Python, ``graphctx.store.bm25``), and a chunk
written before ``repeats`` existed is counted from its stored terms until ``init_schema``
adds it.
"""

from __future__ import annotations

import asyncio
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
from graphctx.store.neo4j.text_statistics import term_repeats
from graphctx.store.records import ChunkHit, NewChunk
from graphctx.testing.fixtures import make_document, unit_vector
from graphctx.text.lexical import query_terms

pytestmark = pytest.mark.neo4j

SCOPES = ["eng", "hr"]
# Terms repeated 1 to 12 times (a two-digit count), a term that is a number (as a count is),
# and terms that begin or end another ("pay", "payment").
TEXTS = [
    "payment payment payment gateway 2 2 outage",
    "payment gateway gateway gateway gateway gateway gateway gateway gateway gateway gateway",
    " ".join(["broker"] * 12 + ["2", "payment"]),
    "pay payment payments 2 broker broker",
    "gateway outage outage 2 2 2 2 2 2 2 2 2 2 2",
    "kafka broker topic offset",
    "salary 급여 급여 payment",
]
QUERIES = ["payment gateway", "broker 2", "pay outage", "급여 payment broker", "gateway 2 outage"]
CHUNKS = """
MATCH (c:Chunk {namespace: $namespace})
RETURN c.chunk_id AS chunk_id, c.acl_key AS key, c.terms AS terms, c.length AS length,
       c.repeats AS repeats
ORDER BY chunk_id
"""
STRIP_REPEATS = """
MATCH (c:Chunk {namespace: $namespace})
WHERE c.chunk_id IN $chunk_ids
REMOVE c.repeats
"""


def soon() -> float:
    return time.monotonic() + 30.0


def chunks(runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str) -> list[dict[str, Any]]:
    return runner.run(store.run_read(CHUNKS, {"namespace": namespace}, soon()))


def recounted(rows: list[dict[str, Any]], query: str, keys: set[str], limit: int) -> list[ChunkHit]:
    """Visible BM25 over the visible chunks, each term counted in the stored terms."""
    terms = query_terms(query)
    visible = [r for r in rows if r["key"] in keys]
    pool = []
    for row in visible:
        counts = Counter(str(row["terms"]).split(" "))
        frequencies = tuple(counts[t] for t in terms)
        if any(frequencies):
            pool.append(Candidate(row["chunk_id"], row["chunk_id"], row["length"], frequencies))
    ranked = rank_by_visible_bm25(pool, len(visible), limit)
    return [ChunkHit(chunk_id, score) for chunk_id, score in ranked]


def visible_keys(rows: list[dict[str, Any]], scopes: frozenset[str]) -> set[str]:
    """The scope-set keys of the chunks of documents ``d<i>`` (scope ``SCOPES[i % 2]``)."""
    document = {str(r["chunk_id"]): int(str(r["chunk_id"]).split("@")[0][1:]) for r in rows}
    return {str(r["key"]) for r in rows if SCOPES[document[str(r["chunk_id"])] % 2] in scopes}


def searches(
    runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str
) -> dict[tuple[str, frozenset[str]], list[ChunkHit]]:
    out = {}
    for query in QUERIES:
        for scopes in (frozenset({"eng"}), frozenset(SCOPES)):
            out[(query, scopes)] = runner.run(
                store.fulltext_search(namespace, query, scopes, 4, soon())
            )
    return out


def write(runner: asyncio.Runner, store: Neo4jGraphStore, namespace: str) -> None:
    for i, text in enumerate(TEXTS):
        doc = make_document(namespace, f"d{i}", text, {SCOPES[i % 2]})
        chunk = NewChunk(0, 0, len(text), text, unit_vector(f"{namespace}/{i}"))
        runner.run(store.write_document(doc, [chunk], "test"))


def test_written_repeats_give_the_hits_and_scores_of_a_recount(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "r" + uuid.uuid4().hex[:12]
    write(neo4j_runner, neo4j_store, namespace)
    rows = chunks(neo4j_runner, neo4j_store, namespace)
    assert [r["repeats"] for r in rows] == [term_repeats(str(r["terms"])) for r in rows]
    for (query, scopes), hits in searches(neo4j_runner, neo4j_store, namespace).items():
        assert hits == recounted(rows, query, visible_keys(rows, scopes), 4), (query, scopes)
        assert hits


def stripping(
    namespace: str, chunk_ids: list[str]
) -> Callable[[neo4j.AsyncManagedTransaction], Awaitable[list[dict[str, Any]]]]:
    async def work(tx: neo4j.AsyncManagedTransaction) -> list[dict[str, Any]]:
        return await fetch(tx, STRIP_REPEATS, namespace=namespace, chunk_ids=chunk_ids)

    return work


def test_chunks_without_repeats_read_the_same_and_init_adds_them(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "o" + uuid.uuid4().hex[:12]
    write(neo4j_runner, neo4j_store, namespace)
    before = searches(neo4j_runner, neo4j_store, namespace)
    ids = [str(r["chunk_id"]) for r in chunks(neo4j_runner, neo4j_store, namespace)]
    for older in (ids[::2], ids):  # a graph part written before repeats, then all of it
        neo4j_runner.run(neo4j_store._write(stripping(namespace, older), "strip"))
        rows = chunks(neo4j_runner, neo4j_store, namespace)
        assert sum(r["repeats"] is None for r in rows) == len(older)
        assert searches(neo4j_runner, neo4j_store, namespace) == before

    neo4j_runner.run(neo4j_store.init_schema())

    rows = chunks(neo4j_runner, neo4j_store, namespace)
    assert [r["repeats"] for r in rows] == [term_repeats(str(r["terms"])) for r in rows]
    assert searches(neo4j_runner, neo4j_store, namespace) == before
