"""``graphctx bench --store neo4j://...``: graphctx against neo4j-graphrag on one Neo4j server.

On the same server, the same data and the same indexes, one run measures:

- ``graphctx (all scopes)``: ``ContextProvider.aretrieve`` in hybrid mode, with a principal that
  holds every scope. This is the like-for-like row, because neo4j-graphrag has no ACL pre-filter.
- ``graphctx (1-3 scopes)``: the same, with a principal that holds 1 to 3 of the 10 scopes.
  Recall is measured against the gold passages that principal may see.
- ``HybridRetriever`` and ``HybridCypherRetriever`` (neo4j-graphrag), unfiltered, on graphctx's
  vector index (``graphctx_chunk_embedding``) and full-text index (``graphctx_chunk_text``).
  The Cypher variant's retrieval query returns the chunk and its document.

The full-text index holds graphctx's analysed terms (stemmed, lower-cased) under the
``whitespace`` analyser (``store/neo4j/README.md``). A raw question does not match that
vocabulary, and neo4j-graphrag sends query text to Lucene unescaped. So, by default, the
neo4j-graphrag rows get the question's analysed terms as quoted Lucene phrases: the text
graphctx sends, minus its ACL clause. They get the raw question's embedding as the query vector.
Both steps are inside the timed region. A further row, ``HybridRetriever (raw question)``, shows
the out-of-the-box call: the question as it is, embedded by the retriever through the
:class:`UniversalSentenceEncoderEmbedder` wrapper. Lucene parse errors count as empty results.

Data: 2WikiMultihopQA from the shared data folder. Each corpus passage is one document with one
chunk, and its document id is the corpus id. Recall@k counts the questions' ``supporting_ids``
in the top k. The other corpora's passages (HotpotQA, MuSiQue and Korean statutes) pad each
size as distractors: first each passage once, then pairs of them. A pair's text is the
concatenation, and its vector is the normalised sum of the two USE vectors. This keeps 100k
distractor chunks distinct without embedding 90k new texts on two cores. No 2Wiki passage is
ever repeated. Documents are spread over ``SCOPE_COUNT`` scopes. The sizes nest: the run
ingests up to the first size, measures, then ingests the rest of the next size.

Ingest: the first ``PORT_SAMPLE`` documents of each size step go through
``GraphStore.write_document``, one transaction per document. The rest of each step goes through
``GraphStore.write_documents``, ``BULK_BATCH`` documents per transaction, as ``graphctx ingest``
batches them. Both rates are the store port's (the end-to-end rate adds the measured USE
embedding rate), and the graph is exactly what graphctx writes.

Fairness: the same top-k (10; recall@5 is its prefix), the same questions in the same order,
and the same server. Systems take turns per question, in a rotating order, and warm-up
queries are excluded. graphctx latency is the full ``aretrieve``: query embedding, candidate
search (50 per index), fusion, chunk fetch, packing and the output gate. The neo4j-graphrag
latency is query embedding plus ``search()``. Both run on one thread against one server.

neo4j-graphrag is a benchmark-only tool, not a graphctx dependency. It is imported lazily:
``pip install neo4j-graphrag``.

Modules: ``corpus`` (questions, passages, distractors), ``bulk_load`` (a size step's ingest),
``graphrag`` (the neo4j-graphrag systems), ``measure`` (one size step), ``report`` (Markdown);
this one runs the sizes on one server and writes ``neo4j.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import neo4j

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import ConfigurationError, StoreUnavailableError
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore, parse_location
from graphctx.store.records import Vector
from graphctx_lab.bench.on_neo4j.bulk_load import ingest_step, scalar_count
from graphctx_lab.bench.on_neo4j.corpus import (
    BENCH_NAMESPACE,
    DATASET,
    BenchDocument,
    Question,
    build_corpus,
    cache_dir,
    cached_vectors,
    load_questions,
)
from graphctx_lab.bench.on_neo4j.graphrag import graphrag_systems, graphrag_version, import_graphrag
from graphctx_lab.bench.on_neo4j.measure import measure
from graphctx_lab.bench.on_neo4j.report import render_markdown
from graphctx_lab.bench.on_neo4j.round_trips import count_round_trips
from graphctx_lab.bench.on_neo4j.systems import TOP_K
from graphctx_lab.bench.store import SCOPE_COUNT, load_passages
from graphctx_lab.neo4j_launcher import Neo4jUnavailable, running_neo4j

__all__ = ["run_neo4j_bench"]

SERVER_HEAP = "2g"
# A fresh server on a loaded machine can take minutes to answer its first queries, past a
# store's 10 s open bound: the bench retries the open for this long (as tests/integration does).
OPEN_READY_S = 180.0
SERVER_PAGECACHE = "2g"


@dataclass(frozen=True)
class Target:
    uri: str
    auth: tuple[str, str]
    database: str
    version: str
    own_server: bool


def run_neo4j_bench(out: Path, sizes: list[int], queries: int, data: Path) -> int:
    """Run the comparison at each size; writes ``out/neo4j.json`` and prints a Markdown table.

    Uses ``NEO4J_URI`` (with ``NEO4J_USER`` / ``NEO4J_PASSWORD`` / ``NEO4J_DATABASE``) when
    set; otherwise starts a throwaway server with :mod:`graphctx_lab.neo4j_launcher`.
    """
    try:
        graphrag = import_graphrag()
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sizes = sorted(set(sizes))
    if not sizes or sizes[0] < 1 or queries < 1:
        print("error: sizes and queries must be positive", file=sys.stderr)
        return 2
    passages, _ = load_passages(data)
    questions = load_questions(data)
    embedder = UniversalSentenceEncoderEmbedder()
    vectors, embed_rate = cached_vectors(embedder, passages, cache_dir())
    corpus = build_corpus(passages, max(sizes))
    uri = os.environ.get("NEO4J_URI")
    if uri:
        where = parse_location(uri, os.environ)
        target = Target(where.uri, where.auth, where.database, "external", own_server=False)
        return _run(graphrag, target, out, sizes, queries, corpus, vectors, questions, embed_rate)
    try:
        manager = running_neo4j(heap=SERVER_HEAP, pagecache=SERVER_PAGECACHE)
        server = manager.__enter__()
    except Neo4jUnavailable as exc:
        print(f"error: no Neo4j server: set NEO4J_URI or install Java 21+: {exc}", file=sys.stderr)
        return 2
    try:
        target = Target(server.uri, server.auth, server.database, server.version, own_server=True)
        return _run(graphrag, target, out, sizes, queries, corpus, vectors, questions, embed_rate)
    finally:
        manager.__exit__(None, None, None)


def _run(
    graphrag: dict[str, ModuleType],
    target: Target,
    out: Path,
    sizes: list[int],
    count: int,
    corpus: list[BenchDocument],
    vectors: list[Vector],
    questions: list[Question],
    embed_rate: float,
) -> int:
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "server": {
            "version": target.version,
            "started_by_bench": target.own_server,
            **({"heap": SERVER_HEAP, "pagecache": SERVER_PAGECACHE} if target.own_server else {}),
        },
        "neo4j_graphrag": graphrag_version(),
        "embedder": "use-multilingual-v3",
        "embed_chunks_per_s": round(embed_rate, 1),
        "dataset": DATASET,
        "top_k": TOP_K,
        "scopes": SCOPE_COUNT,
        "notes": __doc__.split("\n\n")[1:7] if __doc__ else [],
        "sizes": [],
    }
    entries = asyncio.run(
        _bench_sizes(graphrag, target, sizes, count, corpus, vectors, questions, embed_rate)
    )
    results["sizes"] = entries
    out.mkdir(parents=True, exist_ok=True)
    path = out / "neo4j.json"
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(render_markdown(results))
    print(f"\nwrote {path}")
    return 0


async def _open_when_ready(store: Neo4jGraphStore) -> None:
    give_up = time.monotonic() + OPEN_READY_S
    while True:
        try:
            await store.open()
            return
        except StoreUnavailableError:
            if time.monotonic() > give_up:
                raise


async def _bench_sizes(
    graphrag: dict[str, ModuleType],
    target: Target,
    sizes: list[int],
    count: int,
    corpus: list[BenchDocument],
    vectors: list[Vector],
    questions: list[Question],
    embed_rate: float,
) -> list[dict[str, Any]]:
    embedder = UniversalSentenceEncoderEmbedder()
    store = Neo4jGraphStore(target.uri, target.auth, target.database)
    await _open_when_ready(store)
    await store.init_schema()
    driver = neo4j.GraphDatabase.driver(target.uri, auth=target.auth)
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    try:
        existing = scalar_count(
            driver,
            target.database,
            "MATCH (d:Document {namespace: $ns}) RETURN count(d) AS n",
            ns=BENCH_NAMESPACE,
        )
        if existing:
            raise ConfigurationError(
                f"namespace {BENCH_NAMESPACE!r} already holds {existing} documents on this"
                " server: run the benchmark on an empty database"
            )
        systems = graphrag_systems(graphrag, driver, target.database, embedder)
        entries: list[dict[str, Any]] = []
        written = 0
        for size in sizes:
            ingest = await ingest_step(
                store, corpus[written:size], vectors, embed_rate, driver, target.database
            )
            written = size
            entry = {
                "chunks": size,
                "server_chunks": scalar_count(
                    driver, target.database, "MATCH (c:Chunk) RETURN count(c) AS n"
                ),
                "ingest": ingest,
            }
            entry.update(await measure(provider, systems, corpus[:size], questions, count, size))
            entry["round_trips_per_retrieval"] = await count_round_trips(
                target.uri, target.auth, target.database, questions
            )
            entries.append(entry)
            print(json.dumps({"chunks": size, "ingest": ingest}), flush=True)
        return entries
    finally:
        driver.close()
        await store.close()
