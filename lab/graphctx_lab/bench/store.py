"""``graphctx bench``: ingest throughput and retrieval latency at 10k, 100k and 1M chunks.

Corpus (:mod:`.store_corpus`): the real passages under the shared data folder (multi-hop QA
corpora and Korean statutes, ~9.5k unique passages) once each, then synthetic distractors
(two real passages concatenated, vector the normalised sum of their vectors) up to each
size, spread over ``SCOPE_COUNT`` scopes so every query runs the ACL pre-filter. Queries: the
datasets' own questions (English and Korean), asked by principals holding 1 to 3 random
scopes.

Each unique passage is embedded once (the measured embedding rate is reported, and the
vectors are cached between runs); distractors reuse those vectors, so the store write rate
is measured separately and the end-to-end ingest rate is derived from both:
1 / (1/embed + 1/write). ``--store-dir`` keeps each size's store file and reuses it.

Each size runs in a process of its own (its peak RSS is its own), and also runs the bare
baseline (:mod:`.bare`) on the same file and the same queries, right after graphctx, and
reports graphctx's latency over it; ``bench.md`` puts every size's figures side by side
(:mod:`.store_report`).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import platform
import random
import resource
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.embed.port import Embedder
from graphctx.errors import ConfigurationError
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.records import Vector
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.bare import BareBaseline, BareTimes
from graphctx_lab.bench.store_ann import bench_ann
from graphctx_lab.bench.store_corpus import BuiltStore, bench_documents, build_store, corpus_digest
from graphctx_lab.bench.store_report import render_markdown, with_ratios

SCOPE_COUNT = 10
BENCH_NAMESPACE = "bench"
EMBED_BATCH = 256
SEED = 20261129
CORPUS_NOTE = (
    "the shared corpora's real passages once each with their real USE vectors, then synthetic"
    " distractors: two different real passages concatenated, vector the normalised sum of"
    " their two USE vectors (not an embedding of the text); one chunk and one of"
    f" {SCOPE_COUNT} random scopes per document"
)


@dataclass(frozen=True)
class Passage:
    key: str
    title: str
    text: str


def default_data_dir() -> Path:
    return Path(os.environ.get("GRAPHCTX_DATA", "../shared/data"))


def load_passages(data: Path) -> tuple[list[Passage], list[str]]:
    """Passages and questions from the shared data folder; a clear error when it is missing."""
    corpora = sorted(data.glob("multihop/*/corpus.jsonl"))
    laws = sorted(data.glob("kr-law/*.jsonl"))
    if not corpora and not laws:
        raise ConfigurationError(
            f"benchmark data not found under {data.resolve()}: set GRAPHCTX_DATA or --data"
        )
    passages: list[Passage] = []
    questions: list[str] = []
    for path in corpora:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            passages.append(Passage(row["id"], row["title"], row["text"]))
        qpath = path.with_name("questions.jsonl")
        if qpath.exists():
            questions += [json.loads(x)["question"] for x in qpath.read_text("utf-8").splitlines()]
    for path in laws:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            if row.get("deleted") or not row["text"].strip():
                continue
            passages.append(Passage(f"{path.stem}-{n}", row["title"], row["text"]))
            if row["title"]:
                questions.append(f"{row['law']} {row['title']}")
    return passages, questions


def run_bench(
    out: Path,
    *,
    sizes: list[int],
    queries: int,
    data: Path | None = None,
    store_dir: Path | None = None,
    ann: bool = False,
) -> int:
    from graphctx_lab.bench.on_neo4j.corpus import cache_dir, cached_vectors

    passages, questions = load_passages(data or default_data_dir())
    if store_dir is not None:  # before anything is built: each size's store is written here
        store_dir.mkdir(parents=True, exist_ok=True)
    embedder = UniversalSentenceEncoderEmbedder()
    vectors, embed_rate = cached_vectors(embedder, passages, cache_dir())
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "embedder": embedder.name,
        "unique_passages": len(passages),
        "embed_chunks_per_s": round(embed_rate, 1),
        "corpus": CORPUS_NOTE,
        "sizes": [],
    }
    for size in sizes:
        # one process per size: its peak RSS is that size's alone
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            entry = pool.submit(
                _bench_size_in_process,
                size, passages, vectors, questions, queries, embed_rate, store_dir, ann,
            ).result()  # fmt: skip
        results["sizes"].append(entry)  # type: ignore[attr-defined]
        print(json.dumps(entry, indent=2))
    target = out / "bench.json"
    target.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    table = out / "bench.md"
    table.write_text(render_markdown(results), encoding="utf-8")
    print(f"wrote {target} and {table}")
    return 0


def _bench_size_in_process(
    size: int,
    passages: list[Passage],
    vectors: list[Vector],
    questions: list[str],
    queries: int,
    embed_rate: float,
    store_dir: Path | None,
    ann: bool,
) -> dict[str, object]:
    return asyncio.run(
        _bench_size(size, passages, vectors, questions, queries, embed_rate, store_dir, ann)
    )


def embed_unique(
    embedder: UniversalSentenceEncoderEmbedder, passages: list[Passage]
) -> tuple[list[Vector], float]:
    texts = [p.text for p in passages]
    embedder.embed_documents(texts[:8])  # load the model outside the timing
    started = time.perf_counter()
    parts = [
        embedder.embed_documents(texts[i : i + EMBED_BATCH])
        for i in range(0, len(texts), EMBED_BATCH)
    ]
    elapsed = time.perf_counter() - started
    matrix = np.vstack(parts)
    return [matrix[i] for i in range(matrix.shape[0])], len(texts) / elapsed


async def _bench_size(
    size: int,
    passages: list[Passage],
    vectors: list[Vector],
    questions: list[str],
    queries: int,
    embed_rate: float,
    store_dir: Path | None,
    ann: bool,
) -> dict[str, object]:
    rng = random.Random(SEED + size)
    embedder = UniversalSentenceEncoderEmbedder()
    with tempfile.TemporaryDirectory(prefix="graphctx-bench-") as tmp:
        built = await bench_store(Path(tmp) if store_dir is None else store_dir, size,
                                  passages, vectors, embedder.name)  # fmt: skip
        store = SqliteGraphStore(built.path)
        await store.open()
        provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
        plan = query_plan(questions, queries, rng)
        latencies, stages, partial = await _run_queries(provider, plan)
        peak_rss_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        db_bytes = built.path.stat().st_size
        await store.close()
        bare = run_bare(built.path, provider.embedder, plan)
        with_ann = None
        if ann:
            with_ann = await bench_ann(
                built.path, BENCH_NAMESPACE, provider.embedder, plan, WARM_UP, _run_queries
            )
    write_rate = built.write_chunks_per_s
    return with_ratios(
        {
            "chunks": size,
            "store_write_chunks_per_s": round(write_rate, 1),
            "store_reused": built.reused,
            "ingest_chunks_per_s_derived": round(1 / (1 / embed_rate + 1 / write_rate), 1),
            "queries": len(latencies),
            "partial_responses": partial,
            "retrieve_ms": percentiles(latencies),
            "stage_ms": {name: percentiles(values) for name, values in sorted(stages.items())},
            "store_bytes": db_bytes,
            "peak_rss_mb": peak_rss_mb,
            "bare": {
                "retrieve_ms": percentiles([t.total_ms for t in bare]),
                "embed_ms": percentiles([t.embed_ms for t in bare]),
                "fulltext_ms": percentiles([t.fulltext_ms for t in bare]),
                "vector_ms": percentiles([t.vector_ms for t in bare]),
            },
            **({} if with_ann is None else {"ann": with_ann}),
        }
    )


async def bench_store(
    folder: Path, size: int, passages: list[Passage], vectors: list[Vector], embedder: str
) -> BuiltStore:
    """The ``size``-chunk bench store under ``folder``: built, or reused when a run left it."""
    triples = [(p.key, p.title, p.text) for p in passages]
    path = folder / f"store-{size}-{corpus_digest(embedder, triples, size)}.sqlite"
    documents = bench_documents(BENCH_NAMESPACE, triples, vectors, size, SCOPE_COUNT)
    return await build_store(path, documents, size, BENCH_NAMESPACE, embedder)


WARM_UP = 5  # first queries load the vector matrix; not measured


def query_plan(questions: list[str], count: int, rng: random.Random) -> list[tuple[str, list[str]]]:
    """The (question, scopes) of every query, warm-up included: graphctx and the bare
    baseline ask the same ones."""
    plan = []
    for _ in range(count + WARM_UP):
        scopes = rng.sample([f"s{i}" for i in range(SCOPE_COUNT)], rng.randint(1, 3))
        plan.append((rng.choice(questions), scopes))
    return plan


def run_bare(path: Path, embedder: Embedder, plan: list[tuple[str, list[str]]]) -> list[BareTimes]:
    bare = BareBaseline(path, BENCH_NAMESPACE)
    try:
        expressions = [bare.expression(question) for question, _ in plan]
        times = [bare.search(embedder, q, e) for (q, _), e in zip(plan, expressions, strict=True)]
    finally:
        bare.close()
    return times[WARM_UP:]


async def _run_queries(
    provider: ContextProvider, plan: list[tuple[str, list[str]]]
) -> tuple[list[float], dict[str, list[float]], int]:
    """Latencies and stage times of the timed requests, and how many of them came back
    partial (a stage ran out of the deadline: its latency is the deadline's, not the work's)."""
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    partial = 0
    for n, (question, scopes) in enumerate(plan):
        request = ContextRequest(
            query=question,
            principal_id="bench",
            allowed_scopes=scopes,
            namespace=BENCH_NAMESPACE,
            max_tokens=1500,
            timeout_ms=10_000,
        )
        started = time.perf_counter()
        response = await provider.aretrieve(request)
        elapsed = (time.perf_counter() - started) * 1000
        if n < WARM_UP:
            continue
        latencies.append(elapsed)
        partial += response.manifest.partial
        for stage in response.manifest.stages:
            stages.setdefault(stage.stage, []).append(float(stage.elapsed_ms))
    return latencies, stages, partial


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(cuts[49], 2), "p95": round(cuts[94], 2), "max": round(max(values), 2)}
