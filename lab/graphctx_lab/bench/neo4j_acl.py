"""Measure graphctx's strict ACL filters on a real Neo4j: latency and exactness.

    python -m graphctx_lab.bench.neo4j_acl                     # throwaway server, 20k chunks
    python -m graphctx_lab.bench.neo4j_acl --chunks 5000 --report /tmp/acl.md
    NEO4J_URI=... NEO4J_PASSWORD=... python -m graphctx_lab.bench.neo4j_acl --use-env

Writes a synthetic namespace through ``Neo4jGraphStore`` (documents of 10 chunks, ``--scopes``
scopes, 20% of documents carry a second scope, clustered embeddings, topic words in the text),
then for scope sets of growing size compares, against numpy ground truth over the visible set:

- vector search EXACT (cosine over the pre-filtered visible chunks),
- vector search IN_INDEX (HNSW, scope filter inside the index), quantisation NONE and BINARY,
- the post-filter anti-pattern (``db.index.vector.queryNodes`` top-k, then WHERE),
- full-text search with the scope filter inside the Lucene query, and its post-filter
  anti-pattern (``queryNodes`` top-k, then WHERE).

Reports p50/p95 latency (ms, client side, warm), recall@k and the share of queries whose ids
equal the ground truth exactly. Every hit is also checked to be visible (strictness).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from graphctx.store.neo4j import Neo4jGraphStore, VectorStrategy, queries
from graphctx.store.neo4j.acl import lucene_query
from graphctx.store.records import ChunkHit, DocumentDates, NewChunk, NewDocument
from graphctx.text.lexical import query_terms
from graphctx_lab.neo4j_launcher import running_neo4j

CHUNKS_PER_DOC = 10
TOPICS = 100
WORDS_PER_CHUNK = 30
SECOND_SCOPE_SHARE = 0.2
TINY_SCOPE = "tiny"  # a rare scope: about 0.5% of the documents, alone
TINY_SCOPE_SHARE = 0.005
FAR_S = 30.0
SCORE_EPS = 1e-4

POST_FILTER_VECTOR = f"""
CALL db.index.vector.queryNodes('{queries.VECTOR_INDEX}', $k, $vector) YIELD node, score
MATCH (d:Document)-[:HAS_CHUNK]->(node)
WHERE node.namespace = $namespace AND any(s IN d.scopes WHERE s IN $scopes)
RETURN node.chunk_id AS chunk_id, score ORDER BY score DESC
"""
POST_FILTER_FULLTEXT = f"""
CALL db.index.fulltext.queryNodes('{queries.FULLTEXT_INDEX}', $lucene, {{limit: $k}})
YIELD node, score
MATCH (d:Document)-[:HAS_CHUNK]->(node)
WHERE node.namespace = $namespace AND any(s IN d.scopes WHERE s IN $scopes)
RETURN node.chunk_id AS chunk_id, score ORDER BY score DESC
"""
UNFILTERED_FULLTEXT = f"""
CALL db.index.fulltext.queryNodes('{queries.FULLTEXT_INDEX}', $lucene, {{limit: $limit}})
YIELD node, score
RETURN node.chunk_id AS chunk_id, score
"""
DROP_VECTOR_INDEX = f"DROP INDEX {queries.VECTOR_INDEX} IF EXISTS"


@dataclass
class Corpus:
    namespace: str
    chunk_ids: list[str]
    scopes: list[frozenset[str]]
    matrix: np.ndarray[Any, np.dtype[np.float32]]
    topic_words: list[list[str]]
    centroids: np.ndarray[Any, np.dtype[np.float32]]


@dataclass
class Row:
    name: str
    visible: int
    latencies_ms: list[float]
    recall: float
    exact_share: float
    short_share: float  # share of queries returning fewer than k hits
    leaks: int

    def markdown(self) -> str:
        p50 = statistics.median(self.latencies_ms)
        p95 = float(np.percentile(self.latencies_ms, 95))
        return (
            f"| {self.name} | {self.visible} | {p50:.1f} | {p95:.1f} | {self.recall:.3f} |"
            f" {self.exact_share:.0%} | {self.short_share:.0%} | {self.leaks} |"
        )


@contextlib.contextmanager
def server_location(use_env: bool) -> Iterator[tuple[str, tuple[str, str], str, str]]:
    if use_env:
        yield (
            os.environ["NEO4J_URI"],
            (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"]),
            os.environ.get("NEO4J_DATABASE", "neo4j"),
            "from NEO4J_URI",
        )
        return
    with running_neo4j() as server:
        yield server.uri, server.auth, server.database, f"Neo4j {server.version} (throwaway)"


def _unit(rng: np.random.Generator, dim: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


async def ingest(
    store: Neo4jGraphStore, chunks: int, n_scopes: int, dim: int
) -> tuple[Corpus, float]:
    rng = np.random.default_rng(7)
    namespace = "bench" + uuid.uuid4().hex[:8]
    scope_names = [f"scope{i}" for i in range(n_scopes)]
    centroids = np.stack([_unit(rng, dim) for _ in range(TOPICS)])
    vocab = [f"word{i}" for i in range(3000)]
    topic_words = [[f"topic{t}term{j}" for j in range(5)] for t in range(TOPICS)]
    ids: list[str] = []
    scopes_of: list[frozenset[str]] = []
    vectors: list[np.ndarray[Any, np.dtype[np.float32]]] = []
    started = time.perf_counter()
    for doc_no in range(chunks // CHUNKS_PER_DOC):
        scopes = {scope_names[int(rng.integers(n_scopes))]}
        if rng.random() < TINY_SCOPE_SHARE:
            scopes = {TINY_SCOPE}
        elif rng.random() < SECOND_SCOPE_SHARE:
            scopes.add(scope_names[int(rng.integers(n_scopes))])
        parts: list[str] = []
        doc_vectors = []
        for _ in range(CHUNKS_PER_DOC):
            topic = int(rng.integers(TOPICS))
            words = list(rng.choice(vocab, WORDS_PER_CHUNK - 3))
            words += list(rng.choice(topic_words[topic], 3))
            rng.shuffle(words)
            parts.append(" ".join(words))
            v = centroids[topic] + 0.9 * _unit(rng, dim)
            doc_vectors.append((v / np.linalg.norm(v)).astype(np.float32))
        text = "\n\n".join(parts)
        new_chunks, start = [], 0
        for ordinal, (part, vector) in enumerate(zip(parts, doc_vectors, strict=True)):
            new_chunks.append(NewChunk(ordinal, start, start + len(part), part, vector))
            start += len(part) + 2
        digest = hashlib.sha256(text.encode()).hexdigest()
        document = NewDocument(
            namespace=namespace,
            document_id=f"doc{doc_no}",
            source_uri=f"bench://{doc_no}",
            scopes=frozenset(scopes),
            source_version=None,
            title=None,
            media_type="text",
            text=text,
            dates=DocumentDates(updated_at=datetime(2026, 1, 1, tzinfo=UTC)),
            declared_superseded_by=None,
            content_hash=digest,
            metadata_hash=digest,
        )
        await store.write_document(document, new_chunks, "bench")
        for ordinal, vector in enumerate(doc_vectors):
            ids.append(f"doc{doc_no}@1#{ordinal}")
            scopes_of.append(frozenset(scopes))
            vectors.append(vector)
    elapsed = time.perf_counter() - started
    corpus = Corpus(namespace, ids, scopes_of, np.stack(vectors), topic_words, centroids)
    return corpus, len(ids) / elapsed


def visible_mask(corpus: Corpus, scopes: frozenset[str]) -> np.ndarray[Any, np.dtype[np.bool_]]:
    return np.fromiter((bool(s & scopes) for s in corpus.scopes), dtype=bool)


def vector_case(
    corpus: Corpus, query: np.ndarray[Any, Any], scopes: frozenset[str], k: int
) -> Case:
    scores = corpus.matrix.astype(np.float64) @ query.astype(np.float64)
    rows = np.flatnonzero(visible_mask(corpus, scopes))
    best = sorted(rows.tolist(), key=lambda i: -float(scores[i]))[:k]
    index = {cid: i for i, cid in enumerate(corpus.chunk_ids)}
    return Case(
        query,
        [(corpus.chunk_ids[i], float(scores[i])) for i in best],
        lambda cid: float(scores[index[cid]]),
    )


@dataclass
class Case:
    query: Any
    truth: list[tuple[str, float]]  # exact top-k over the visible set, best first
    true_score: Callable[[str], float]


async def measure(
    name: str,
    corpus: Corpus,
    scopes: frozenset[str],
    cases: Sequence[Case],
    search: Callable[[Any], Awaitable[list[str]]],
) -> Row:
    """Tie-aware: a hit counts if its true score reaches the k-th best visible score."""
    allowed = {cid for cid, s in zip(corpus.chunk_ids, corpus.scopes, strict=True) if s & scopes}
    for case in cases[:5]:  # warm the plan cache
        await search(case.query)
    latencies, recalls, exact, short, leaks = [], [], 0, 0, 0
    for case in cases:
        started = time.perf_counter()
        got = await search(case.query)
        latencies.append((time.perf_counter() - started) * 1000)
        leaks += sum(1 for cid in got if cid not in allowed)
        if not case.truth:  # nothing visible matches: the only right answer is nothing
            exact += not got
            recalls.append(1.0 if not got else 0.0)
            continue
        kth = case.truth[-1][1] - SCORE_EPS
        good = [cid for cid in got if cid in allowed and case.true_score(cid) >= kth]
        recalls.append(len(set(good)) / len(case.truth))
        got_scores = [case.true_score(cid) for cid in got]
        want = [score for _, score in case.truth]
        same = len(got_scores) == len(want) and all(
            abs(a - b) <= SCORE_EPS for a, b in zip(got_scores, want, strict=True)
        )
        exact += same
        if not same and os.environ.get("BENCH_DEBUG"):
            print(name, case.query if isinstance(case.query, str) else "", got_scores, want)
        short += len(got) < len(case.truth)
    n = len(cases)
    return Row(name, len(allowed), latencies, float(np.mean(recalls)), exact / n, short / n, leaks)


def _score_of(scores: dict[str, float], chunk_id: str) -> float:
    return scores.get(chunk_id, 0.0)


def ids(hits: list[ChunkHit]) -> list[str]:
    return [hit.chunk_id for hit in hits]


async def run(args: argparse.Namespace) -> str:
    lines: list[str] = []
    with server_location(args.use_env) as (uri, auth, database, label):
        store = Neo4jGraphStore(uri, auth, database)
        await store.open()
        await store.init_schema()
        corpus, ingest_rate = await ingest(store, args.chunks, args.scopes, args.dim)
        lines.append(
            f"{label}; {len(corpus.chunk_ids)} chunks, {args.scopes} scopes,"
            f" dim {args.dim}, k={args.k}, {args.queries} queries per row;"
            f" ingest {ingest_rate:.0f} chunks/s"
        )
        rng = np.random.default_rng(11)
        vectors = []
        for _ in range(args.queries):
            v = corpus.centroids[int(rng.integers(TOPICS))] + 0.9 * _unit(rng, args.dim)
            vectors.append((v / np.linalg.norm(v)).astype(np.float32))
        texts = [
            " ".join(rng.choice(corpus.topic_words[int(rng.integers(TOPICS))], 2))
            for _ in range(args.queries)
        ]
        reader = store._reader  # the benchmark also runs the anti-patterns on the same driver
        assert reader is not None
        header = (
            "| search | visible chunks | p50 ms | p95 ms | recall@k | identical | short | leaks |\n"
            "|---|---|---|---|---|---|---|---|"
        )
        vector_rows: list[str] = []
        text_rows: list[str] = []
        binary_rows: list[str] = []
        scope_sets = [frozenset({TINY_SCOPE})]
        scope_sets += [frozenset(f"scope{i}" for i in range(n)) for n in args.scope_sets]
        strategies = {
            "vector EXACT (pre-filter)": VectorStrategy.EXACT,
            "vector IN_INDEX (HNSW, NONE)": VectorStrategy.IN_INDEX,
        }
        for scopes in scope_sets:
            cases = [vector_case(corpus, v, scopes, args.k) for v in vectors]
            for name, strategy in strategies.items():
                store.vector_strategy = strategy

                async def vector(v: Any, scopes: frozenset[str] = scopes) -> list[str]:
                    deadline = time.monotonic() + FAR_S
                    return ids(
                        await store.vector_search(corpus.namespace, v, scopes, args.k, deadline)
                    )

                row = await measure(name, corpus, scopes, cases, vector)
                vector_rows.append(row.markdown())

            async def post_vector(v: Any, scopes: frozenset[str] = scopes) -> list[str]:
                records, _, _ = await reader.execute_query(
                    POST_FILTER_VECTOR,
                    k=args.k,
                    vector=v.astype(float).tolist(),
                    namespace=corpus.namespace,
                    scopes=sorted(scopes),
                    database_=database,
                    routing_="r",
                )
                return [str(r["chunk_id"]) for r in records]

            row = await measure(
                "vector post-filter (anti-pattern)", corpus, scopes, cases, post_vector
            )
            vector_rows.append(row.markdown())

            text_cases = []
            for text in texts:
                lucene = lucene_query(corpus.namespace, text, scopes)
                assert lucene is not None
                unfiltered = " ".join(f'terms:"{t}"' for t in query_terms(text))
                records, _, _ = await reader.execute_query(
                    UNFILTERED_FULLTEXT,
                    lucene=unfiltered,
                    limit=10_000_000,
                    database_=database,
                    routing_="r",
                )
                allowed = set(np.asarray(corpus.chunk_ids)[visible_mask(corpus, scopes)].tolist())
                scores = {str(r["chunk_id"]): float(r["score"]) for r in records}
                ranked = sorted(
                    ((cid, sc) for cid, sc in scores.items() if cid in allowed),
                    key=lambda pair: -pair[1],
                )
                text_cases.append(
                    Case(text, ranked[: args.k], functools.partial(_score_of, scores))
                )

            async def fulltext(text: Any, scopes: frozenset[str] = scopes) -> list[str]:
                deadline = time.monotonic() + FAR_S
                return ids(
                    await store.fulltext_search(corpus.namespace, text, scopes, args.k, deadline)
                )

            async def post_fulltext(text: Any, scopes: frozenset[str] = scopes) -> list[str]:
                plain = " ".join(f'terms:"{t}"' for t in query_terms(text))
                records, _, _ = await reader.execute_query(
                    POST_FILTER_FULLTEXT,
                    lucene=plain,
                    k=args.k,
                    namespace=corpus.namespace,
                    scopes=sorted(scopes),
                    database_=database,
                    routing_="r",
                )
                return [str(r["chunk_id"]) for r in records]

            row = await measure(
                "fulltext, filter in Lucene query", corpus, scopes, text_cases, fulltext
            )
            text_rows.append(row.markdown())
            row = await measure(
                "fulltext post-filter (anti-pattern)", corpus, scopes, text_cases, post_fulltext
            )
            text_rows.append(row.markdown())

        if not args.skip_binary:
            async with reader.session(database=database) as session:
                await (await session.run(DROP_VECTOR_INDEX)).consume()
                statement = queries.SCHEMA_STATEMENTS[queries.VECTOR_INDEX].replace(
                    "'NONE'", "'BINARY'"
                )
                await (await session.run(statement)).consume()
                await (await session.run(queries.AWAIT_INDEXES, timeout_s=600)).consume()
            store.vector_strategy = VectorStrategy.IN_INDEX
            for scopes in scope_sets:
                cases = [vector_case(corpus, v, scopes, args.k) for v in vectors]

                async def binary(v: Any, scopes: frozenset[str] = scopes) -> list[str]:
                    deadline = time.monotonic() + FAR_S
                    return ids(
                        await store.vector_search(corpus.namespace, v, scopes, args.k, deadline)
                    )

                row = await measure("vector IN_INDEX (HNSW, BINARY)", corpus, scopes, cases, binary)
                binary_rows.append(row.markdown())
            async with reader.session(database=database) as session:
                await (await session.run(DROP_VECTOR_INDEX)).consume()
            store.schema = None
            await store.init_schema()
        await store.close()
    lines += ["", "Vector search", "", header, *vector_rows, *binary_rows]
    lines += ["", "Full-text search", "", header, *text_rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--scopes", type=int, default=10)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--scope-sets", type=int, nargs="+", default=[1, 2, 5, 10])
    parser.add_argument(
        "--use-env", action="store_true", help="use NEO4J_* instead of a new server"
    )
    parser.add_argument("--skip-binary", action="store_true")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    print(report)
    if args.report is not None:
        args.report.write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
