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
``GraphStore.write_document``, one transaction per document, as graphctx ingest does. That is
the reported ingest rate; the end-to-end rate adds the measured USE embedding rate. The rest of
each step is bulk-loaded, ``BULK_BATCH`` documents per transaction, with the write path's own
row builders (``writes.document_properties`` and ``writes.chunk_row``). The graph layout is
therefore the same, and 100k chunks load in minutes instead of hours on two cores.

Fairness: the same top-k (10; recall@5 is its prefix), the same questions in the same order,
and the same server. Systems take turns per question, in a rotating order, and warm-up
queries are excluded. graphctx latency is the full ``aretrieve``: query embedding, candidate
search (50 per index), fusion, chunk fetch, packing and the output gate. The neo4j-graphrag
latency is query embedding plus ``search()``. Both run on one thread against one server.

neo4j-graphrag is a benchmark-only tool, not a graphctx dependency. It is imported lazily:
``pip install neo4j-graphrag``.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import json
import os
import platform
import random
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import neo4j
import numpy as np

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import ConfigurationError
from graphctx.eval.bench import SCOPE_COUNT, Passage, _embed_unique, _percentiles, load_passages
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore, parse_location, queries, writes
from graphctx.store.neo4j.acl import scope_set_key
from graphctx.store.records import DocumentDates, NewChunk, NewDocument, Vector
from graphctx.store.sqlite.lexical import query_terms
from graphctx.testing.neo4j_tools import load_neo4j_tool

BENCH_NAMESPACE = "bench-neo4j"
DATASET = "2wikimultihopqa"
GOLD_PREFIX = "2wiki-"  # corpus ids of the dataset
TOP_K = 10
RECALL_KS = (5, 10)
WARMUP = 5
MAX_TOKENS = 8_000  # room for at least TOP_K packed passages
TIMEOUT_MS = 30_000
SEED = 20261130
SERVER_HEAP = "2g"
SERVER_PAGECACHE = "2g"
INSTALL_HINT = (
    "the Neo4j benchmark compares against neo4j-graphrag, which is not a graphctx dependency;"
    " install it into this environment for the benchmark: pip install neo4j-graphrag"
)

GRAPHCTX_ALL = "graphctx (all scopes)"
GRAPHCTX_SCOPED = "graphctx (1-3 scopes)"
HYBRID = "HybridRetriever"
HYBRID_CYPHER = "HybridCypherRetriever"
HYBRID_RAW = "HybridRetriever (raw question)"
SYSTEMS = (GRAPHCTX_ALL, GRAPHCTX_SCOPED, HYBRID, HYBRID_CYPHER, HYBRID_RAW)

# Appended to neo4j-graphrag's hybrid search, which binds `node` and `score`.
PORT_SAMPLE = 500  # documents per size step written through the GraphStore port
BULK_BATCH = 500  # documents per bulk-load transaction

# Bulk load: the layout of ``queries.CREATE_VERSION`` + ``CREATE_CHUNKS`` for new documents.
BULK_RESERVE_SEQ = """
MATCH (n:Namespace {name: $namespace})
WITH n, n.chunk_seq AS base
SET n.chunk_seq = base + $count
RETURN base
"""
BULK_CREATE = """
UNWIND $rows AS row
CREATE (d:Document)
SET d = row.document
CREATE (c:Chunk)
SET c = row.chunk
CREATE (d)-[:HAS_CHUNK]->(c)
"""

RETRIEVAL_QUERY = """
MATCH (doc:Document)-[:HAS_CHUNK]->(node)
RETURN node.chunk_id AS chunk_id, node.text AS text, doc.document_id AS document_id,
       doc.title AS title, doc.source_uri AS source_uri, score
"""


@dataclass(frozen=True)
class Question:
    text: str
    gold: frozenset[str]  # supporting passage ids = document ids


@dataclass(frozen=True)
class BenchDocument:
    key: str  # document id
    title: str
    text: str
    scope: str
    parts: tuple[int, ...]  # indexes into the embedded passages; two for a distractor pair


@dataclass(frozen=True)
class Target:
    uri: str
    auth: tuple[str, str]
    database: str
    version: str
    own_server: bool


Ask = Callable[[Question, list[str]], Any]  # returns a ranked document-id list (maybe awaitable)


# --- entry point -----------------------------------------------------------------------------
def run_neo4j_bench(out: Path, sizes: list[int], queries: int, data: Path) -> int:
    """Run the comparison at each size; writes ``out/neo4j.json`` and prints a Markdown table.

    Uses ``NEO4J_URI`` (with ``NEO4J_USER`` / ``NEO4J_PASSWORD`` / ``NEO4J_DATABASE``) when
    set; otherwise starts a throwaway server with ``tools/neo4j/server.py``.
    """
    try:
        graphrag = _import_graphrag()
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sizes = sorted(set(sizes))
    if not sizes or sizes[0] < 1 or queries < 1:
        print("error: sizes and queries must be positive", file=sys.stderr)
        return 2
    passages, _ = load_passages(data)
    questions = _load_questions(data)
    embedder = UniversalSentenceEncoderEmbedder()
    vectors, embed_rate = _cached_vectors(embedder, passages, _cache_dir())
    corpus = _build_corpus(passages, max(sizes))
    uri = os.environ.get("NEO4J_URI")
    if uri:
        where = parse_location(uri, os.environ)
        target = Target(where.uri, where.auth, where.database, "external", own_server=False)
        return _run(graphrag, target, out, sizes, queries, corpus, vectors, questions, embed_rate)
    server_module = load_neo4j_tool("server")
    try:
        manager = server_module.running_neo4j(heap=SERVER_HEAP, pagecache=SERVER_PAGECACHE)
        server = manager.__enter__()
    except server_module.Neo4jUnavailable as exc:
        print(f"error: no Neo4j server: set NEO4J_URI or install Java 21+: {exc}", file=sys.stderr)
        return 2
    try:
        target = Target(server.uri, server.auth, server.database, server.version, own_server=True)
        return _run(graphrag, target, out, sizes, queries, corpus, vectors, questions, embed_rate)
    finally:
        manager.__exit__(None, None, None)


def _import_graphrag() -> dict[str, ModuleType]:
    try:
        return {
            "retrievers": importlib.import_module("neo4j_graphrag.retrievers"),
            "embeddings": importlib.import_module("neo4j_graphrag.embeddings.base"),
            "types": importlib.import_module("neo4j_graphrag.types"),
        }
    except ImportError as exc:
        raise ConfigurationError(INSTALL_HINT) from exc


# --- data ------------------------------------------------------------------------------------
def _load_questions(data: Path) -> list[Question]:
    path = data / "multihop" / DATASET / "questions.jsonl"
    if not path.exists():
        raise ConfigurationError(f"{path} not found: set GRAPHCTX_DATA or --data")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Question(row["question"], frozenset(row["supporting_ids"])) for row in rows]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphctx" / "bench"


def _cached_vectors(
    embedder: UniversalSentenceEncoderEmbedder, passages: list[Passage], cache: Path
) -> tuple[list[Vector], float]:
    """The USE vector of every unique passage, embedded once and kept between runs."""
    digest = hashlib.sha256(embedder.name.encode())
    for p in passages:
        digest.update(p.text.encode("utf-8") + b"\0")
    stem = cache / f"use-{digest.hexdigest()[:16]}"
    matrix_path, meta_path = stem.with_suffix(".npy"), stem.with_suffix(".json")
    if matrix_path.exists() and meta_path.exists():
        matrix = np.load(matrix_path)
        rate = float(json.loads(meta_path.read_text("utf-8"))["embed_chunks_per_s"])
        return [matrix[i] for i in range(matrix.shape[0])], rate
    vectors, rate = _embed_unique(embedder, passages)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(matrix_path, np.vstack(vectors))
    meta_path.write_text(json.dumps({"embed_chunks_per_s": rate}), encoding="utf-8")
    return vectors, rate


def _build_corpus(passages: list[Passage], size: int) -> list[BenchDocument]:
    """2Wiki passages once each, then distractors: other passages once, then pairs."""
    rng = random.Random(SEED)
    gold = [i for i, p in enumerate(passages) if p.key.startswith(GOLD_PREFIX)]
    pool = [i for i, p in enumerate(passages) if not p.key.startswith(GOLD_PREFIX)]
    docs: list[BenchDocument] = []

    def add(key: str, parts: tuple[int, ...]) -> None:
        title = " / ".join(passages[i].title for i in parts)
        text = "\n\n".join(passages[i].text for i in parts)
        docs.append(BenchDocument(key, title, text, f"s{rng.randrange(SCOPE_COUNT)}", parts))

    for i in gold:
        add(passages[i].key, (i,))
    for i in pool:
        add(f"distractor-{len(docs)}", (i,))
    seen: set[tuple[int, int]] = set()
    while len(docs) < size:
        a, b = rng.sample(pool, 2)
        if (a, b) not in seen:
            seen.add((a, b))
            add(f"distractor-{len(docs)}", (a, b))
    return docs[:size]


def _vector(doc: BenchDocument, vectors: list[Vector]) -> Vector:
    if len(doc.parts) == 1:
        return vectors[doc.parts[0]]
    total = np.sum([np.asarray(vectors[i], dtype=np.float32) for i in doc.parts], axis=0)
    unit: Vector = np.asarray(total / np.linalg.norm(total), dtype=np.float32)
    return unit


def _new_document(doc: BenchDocument) -> NewDocument:
    digest = hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    return NewDocument(
        namespace=BENCH_NAMESPACE,
        document_id=doc.key,
        source_uri=f"bench://{doc.key}",
        scopes=frozenset({doc.scope}),
        source_version="1",
        title=doc.title,
        media_type="record",
        text=doc.text,
        dates=DocumentDates(),
        declared_superseded_by=None,
        content_hash=digest,
        metadata_hash=digest,
    )


# --- run -------------------------------------------------------------------------------------
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
        "neo4j_graphrag": _graphrag_version(),
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


def _graphrag_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("neo4j-graphrag")
    except PackageNotFoundError:
        return "unknown"


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
    await store.open()
    await store.init_schema()
    driver = neo4j.GraphDatabase.driver(target.uri, auth=target.auth)
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    try:
        existing = _scalar(
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
        systems = _graphrag_systems(graphrag, driver, target.database, embedder)
        entries: list[dict[str, Any]] = []
        written = 0
        for size in sizes:
            ingest = await _ingest(
                store, corpus[written:size], vectors, embed_rate, driver, target.database
            )
            written = size
            entry = {
                "chunks": size,
                "server_chunks": _scalar(
                    driver, target.database, "MATCH (c:Chunk) RETURN count(c) AS n"
                ),
                "ingest": ingest,
            }
            entry.update(await _measure(provider, systems, corpus[:size], questions, count, size))
            entries.append(entry)
            print(json.dumps({"chunks": size, "ingest": ingest}), flush=True)
        return entries
    finally:
        driver.close()
        await store.close()


def _scalar(driver: neo4j.Driver, database: str, query: str, **params: Any) -> int:
    records, _, _ = driver.execute_query(query, params, database_=database)
    return int(records[0]["n"])


async def _ingest(
    store: Neo4jGraphStore,
    docs: Sequence[BenchDocument],
    vectors: list[Vector],
    embed_rate: float,
    driver: neo4j.Driver,
    database: str,
) -> dict[str, float]:
    """The first ``PORT_SAMPLE`` documents go through the GraphStore port, one transaction per
    document, as ingest does (that is the measured ingest rate); the rest are bulk-loaded."""
    embedder_name = UniversalSentenceEncoderEmbedder().name
    sample, rest = docs[:PORT_SAMPLE], docs[PORT_SAMPLE:]
    started = time.perf_counter()
    for doc in sample:
        chunk = NewChunk(0, 0, len(doc.text), doc.text, _vector(doc, vectors))
        await store.write_document(_new_document(doc), [chunk], embedder_name)
    port_s = time.perf_counter() - started
    started = time.perf_counter()
    for at in range(0, len(rest), BULK_BATCH):
        _bulk_write(driver, database, rest[at : at + BULK_BATCH], vectors)
        if (at // BULK_BATCH) % 20 == 19:
            print(f"  bulk-loaded {at + BULK_BATCH}/{len(rest)}", flush=True)
    bulk_s = time.perf_counter() - started
    started = time.perf_counter()
    driver.execute_query(queries.AWAIT_INDEXES, {"timeout_s": 900}, database_=database)
    await_s = time.perf_counter() - started
    port_rate = len(sample) / port_s if sample else 0.0
    return {
        "port_chunks": len(sample),
        "port_write_chunks_per_s": round(port_rate, 1),
        "ingest_chunks_per_s_derived": round(1 / (1 / embed_rate + 1 / port_rate), 1)
        if port_rate
        else 0.0,
        "bulk_chunks": len(rest),
        "bulk_chunks_per_s": round(len(rest) / bulk_s, 1) if rest else 0.0,
        "index_catch_up_s": round(await_s, 2),
    }


def _bulk_write(
    driver: neo4j.Driver, database: str, docs: Sequence[BenchDocument], vectors: list[Vector]
) -> None:
    """Documents in graphctx's layout (the write path's own row builders), one transaction."""

    def work(tx: neo4j.ManagedTransaction) -> None:
        record = tx.run(BULK_RESERVE_SEQ, namespace=BENCH_NAMESPACE, count=len(docs)).single()
        assert record is not None, "the port sample created the namespace"
        base = int(record["base"])
        rows, deltas = [], Counter[str]()
        for n, doc in enumerate(docs):
            document = _new_document(doc)
            chunk = NewChunk(0, 0, len(doc.text), doc.text, _vector(doc, vectors))
            version = writes.version_label(document, None)
            rows.append(
                {
                    "document": writes.document_properties(document, version, 1),
                    "chunk": writes.chunk_row(document, 1, chunk, base + n + 1),
                }
            )
            deltas[scope_set_key(BENCH_NAMESPACE, document.scopes)] += 1
        tx.run(BULK_CREATE, rows=rows).consume()
        scopes = {scope_set_key(BENCH_NAMESPACE, [d.scope]): [d.scope] for d in docs}
        delta_rows = [
            {"key": key, "chunks": count, "scopes": scopes[key]}
            for key, count in sorted(deltas.items())
        ]
        tx.run(queries.ADJUST_SCOPE_SETS, namespace=BENCH_NAMESPACE, deltas=delta_rows).consume()

    with driver.session(database=database) as session:
        session.execute_write(work)


# --- the systems -----------------------------------------------------------------------------
def _lucene_terms(question: str) -> str:
    """The question's analysed terms as quoted Lucene phrases (graphctx's text, no ACL)."""
    terms = query_terms(question)
    quoted = ('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in terms)
    return " ".join(quoted) or '""'


def _document_of(chunk_id: str) -> str:
    return chunk_id.split("@", 1)[0]  # chunk ids are "<document_id>@<version>#<ordinal>"


def _graphrag_systems(
    graphrag: dict[str, ModuleType],
    driver: neo4j.Driver,
    database: str,
    embedder: UniversalSentenceEncoderEmbedder,
) -> dict[str, Callable[[Question], list[str]]]:
    """The neo4j-graphrag retrievers on graphctx's indexes, each as question -> ranked ids."""
    retrievers, types = graphrag["retrievers"], graphrag["types"]
    item = types.RetrieverResultItem

    def embed_query(_self: object, text: str) -> list[float]:
        return [float(x) for x in embedder.embed_query(text)]

    # A subclass of neo4j-graphrag's Embedder around graphctx's USE embedder.
    wrapper_type = type(
        "UseEmbedder", (graphrag["embeddings"].Embedder,), {"embed_query": embed_query}
    )
    wrapper = wrapper_type()

    def chunk_item(record: neo4j.Record) -> Any:
        node = record["node"]
        return item(content=node["text"], metadata={"document_id": _document_of(node["chunk_id"])})

    def document_item(record: neo4j.Record) -> Any:
        return item(content=record["text"], metadata={"document_id": record["document_id"]})

    common = {
        "driver": driver,
        "vector_index_name": queries.VECTOR_INDEX,
        "fulltext_index_name": queries.FULLTEXT_INDEX,
        "embedder": wrapper,
        "neo4j_database": database,
    }
    hybrid = retrievers.HybridRetriever(
        **common, return_properties=["chunk_id", "text"], result_formatter=chunk_item
    )
    hybrid_cypher = retrievers.HybridCypherRetriever(
        **common, retrieval_query=RETRIEVAL_QUERY, result_formatter=document_item
    )

    def analysed(retriever: Any) -> Callable[[Question], list[str]]:
        def ask(question: Question) -> list[str]:
            vector = wrapper.embed_query(question.text)
            found = retriever.search(
                query_text=_lucene_terms(question.text), query_vector=vector, top_k=TOP_K
            )
            return [str(i.metadata["document_id"]) for i in found.items]

        return ask

    def raw(question: Question) -> list[str]:
        try:
            found = hybrid.search(query_text=question.text, top_k=TOP_K)
        except Exception as exc:  # Lucene syntax in the question: SearchQueryParseError
            if type(exc).__name__ != "SearchQueryParseError":
                raise
            raise _ParseFailure from exc
        return [str(i.metadata["document_id"]) for i in found.items]

    return {HYBRID: analysed(hybrid), HYBRID_CYPHER: analysed(hybrid_cypher), HYBRID_RAW: raw}


class _ParseFailure(Exception):
    pass


async def _graphctx_ask(provider: ContextProvider, question: Question, scopes: list[str]) -> Any:
    request = ContextRequest(
        query=question.text,
        principal_id="bench",
        allowed_scopes=scopes,
        namespace=BENCH_NAMESPACE,
        retrieval_mode=RetrievalMode.HYBRID,
        max_tokens=MAX_TOKENS,
        timeout_ms=TIMEOUT_MS,
    )
    return await provider.aretrieve(request)


@dataclass
class _Tally:
    latencies: list[float]
    recall: dict[int, list[float]]
    returned: list[int]
    stages: dict[str, list[float]]
    failures: int = 0
    partial: int = 0
    leaks: int = 0

    @classmethod
    def new(cls) -> _Tally:
        return cls([], {k: [] for k in RECALL_KS}, [], {})

    def report(self) -> dict[str, Any]:
        return {
            "latency_ms": _percentiles(self.latencies),
            **{
                f"recall@{k}": round(float(np.mean(v)), 4) if v else None
                for k, v in self.recall.items()
            },
            "questions_scored": len(self.recall[RECALL_KS[0]]),
            "mean_returned": round(float(np.mean(self.returned)), 2) if self.returned else 0,
            "failures": self.failures,
            "partial_responses": self.partial,
            "leaks": self.leaks,
            **(
                {"stage_ms": {k: _percentiles(v) for k, v in sorted(self.stages.items())}}
                if self.stages
                else {}
            ),
        }


async def _measure(
    provider: ContextProvider,
    graphrag_systems: dict[str, Callable[[Question], list[str]]],
    docs: list[BenchDocument],
    questions: list[Question],
    count: int,
    size: int,
) -> dict[str, Any]:
    scope_of = {d.key: d.scope for d in docs}
    eligible = [q for q in questions if q.gold <= scope_of.keys()]
    rng = random.Random(SEED)  # the same questions and principals at every size
    chosen = rng.sample(eligible, min(len(eligible), count + WARMUP))
    every_scope = [f"s{i}" for i in range(SCOPE_COUNT)]
    principals = [rng.sample(every_scope, rng.randint(1, 3)) for _ in chosen]
    tallies = {name: _Tally.new() for name in SYSTEMS}
    for n, (question, scopes) in enumerate(zip(chosen, principals, strict=True)):
        shift = n % len(SYSTEMS)
        for name in SYSTEMS[shift:] + SYSTEMS[:shift]:
            granted = scopes if name == GRAPHCTX_SCOPED else every_scope
            tally = tallies[name]
            started = time.perf_counter()
            ranking: list[str] = []
            failed = partial = False
            stages: list[tuple[str, float]] = []
            if name in (GRAPHCTX_ALL, GRAPHCTX_SCOPED):
                response = await _graphctx_ask(provider, question, granted)
                items = sorted(response.items, key=lambda i: -i.retrieval_scores.fused)
                ranking = [i.document_id for i in items]
                partial = response.manifest.partial
                stages = [(st.stage, float(st.elapsed_ms)) for st in response.manifest.stages]
            else:
                try:
                    ranking = graphrag_systems[name](question)
                except _ParseFailure:
                    failed = True
            elapsed = (time.perf_counter() - started) * 1000
            if n < WARMUP:
                continue
            tally.latencies.append(elapsed)
            tally.failures += failed
            tally.partial += partial
            for stage, ms in stages:
                tally.stages.setdefault(stage, []).append(ms)
            ranking = list(dict.fromkeys(ranking))[:TOP_K]
            tally.returned.append(len(ranking))
            visible = set(granted)
            tally.leaks += sum(scope_of.get(key) not in visible for key in ranking)
            gold = {g for g in question.gold if scope_of[g] in visible}
            if gold:
                for k in RECALL_KS:
                    tally.recall[k].append(len(gold & set(ranking[:k])) / len(gold))
    return {
        "questions": len(chosen) - WARMUP,
        "warmup_excluded": WARMUP,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "systems": {name: tallies[name].report() for name in SYSTEMS},
    }


# --- report ----------------------------------------------------------------------------------
def render_markdown(results: dict[str, Any]) -> str:
    lines = [
        f"Neo4j {results['server']['version']}, neo4j-graphrag {results['neo4j_graphrag']},"
        f" {results['dataset']}, top-k {results['top_k']}, {results['machine']['cpus']} CPUs",
        "",
        "| chunks | system | ACL | p50 ms | p95 ms | recall@5 | recall@10 | n | failures |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in results["sizes"]:
        for name, row in entry["systems"].items():
            acl = {GRAPHCTX_ALL: "pre-filter, all 10", GRAPHCTX_SCOPED: "pre-filter, 1-3"}.get(
                name, "none"
            )
            lines.append(
                f"| {entry['chunks']:,} | {name} | {acl} | {row['latency_ms'].get('p50', '-')}"
                f" | {row['latency_ms'].get('p95', '-')} | {row['recall@5']} | {row['recall@10']}"
                f" | {row['questions_scored']} | {row['failures']} |"
            )
    lines += [
        "",
        "| chunks | graphctx / HybridRetriever p50, p95 | graphctx / HybridCypherRetriever"
        " p50, p95 | recall@10 delta vs Hybrid, HybridCypher | ingest chunks/s (store write;"
        " with embedding; bulk load) |",
        "|---:|---|---|---|---|",
    ]
    for entry in results["sizes"]:
        systems = entry["systems"]
        ratio = _ratio_cell(systems)
        delta = _delta_cell(systems)
        ingest = entry["ingest"]
        lines.append(
            f"| {entry['chunks']:,} | {ratio(HYBRID, 'p50')}, {ratio(HYBRID, 'p95')}"
            f" | {ratio(HYBRID_CYPHER, 'p50')}, {ratio(HYBRID_CYPHER, 'p95')}"
            f" | {delta(HYBRID)}, {delta(HYBRID_CYPHER)}"
            f" | {ingest['port_write_chunks_per_s']}; {ingest['ingest_chunks_per_s_derived']};"
            f" {ingest['bulk_chunks_per_s']} |"
        )
    return "\n".join(lines)


def _ratio_cell(systems: dict[str, Any]) -> Callable[[str, str], str]:
    ours = systems[GRAPHCTX_ALL]["latency_ms"]

    def ratio(other: str, cut: str) -> str:
        a, b = ours.get(cut), systems[other]["latency_ms"].get(cut)
        return f"{a / b:.2f}x" if a and b else "-"

    return ratio


def _delta_cell(systems: dict[str, Any]) -> Callable[[str], str]:
    ours = systems[GRAPHCTX_ALL]["recall@10"]

    def delta(other: str) -> str:
        theirs = systems[other]["recall@10"]
        return f"{ours - theirs:+.3f}" if ours is not None and theirs is not None else "-"

    return delta
