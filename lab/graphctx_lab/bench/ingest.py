"""``graphctx bench ingest``: chunks/s of the embedder alone, the store alone and end to end.

One run, on the embedded store and on Neo4j (``NEO4J_URI``, else a throwaway server from
:mod:`graphctx_lab.neo4j_launcher`), over the same documents: real passages from the shared
data folder, one :class:`SourceDocument` each, chunked by the ingest chunker.

* ``embedder``: the default embedder over every chunk text, in the ingest pipeline's
  embedding tasks (``EMBED_CHARS``; its batches for code without them), on one thread and on
  the pipeline's embedding workers (threads); the end-to-end ratio is taken against the faster
  of the two, measured in the same run. Also on the workers: one call per document, and the
  pipeline's own calls (``embed_each`` over each task's documents, every document's vectors
  bitwise as its own call gives them, ``graphctx.ingest.batching.embed_sources``; one call per
  document for code without it); the second end-to-end ratio is taken against the latter.
* ``store``: the same chunks with pre-computed embeddings written through the GraphStore port,
  once in the pipeline's batches (``write_documents``) and once one document per call
  (``write_document``), each into a fresh namespace: store time only, no embedding. A few
  documents are written first, untimed, into another namespace (the server plans the
  statements once, as a running service has long done). End to end gets no such warm-up.
  Each store figure is the median of ``STORE_PASSES`` passes (each into its own fresh
  namespace, the chunks embedded once): a sub-second pass on a shared machine swings by 2x.
* ``end_to_end``: :func:`graphctx.ingest.pipeline.ingest_sources` from the sources into a
  fresh namespace (chunking, embedding, writing).

``--baseline SRC`` (an older tree's ``src/``, e.g. ``git archive <commit> src | tar -x -C
/tmp/old``) runs the same measurements against that code in a subprocess, on the same Neo4j
server, and reports new/old ratios. Code without a batch write is timed one document per call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import ConfigurationError, StoreUnavailableError
from graphctx.ingest.chunking import chunk_document
from graphctx.ingest.pipeline import IngestDefaults, build_document, ingest_sources
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument
from graphctx.store.port import GraphStore
from graphctx.store.records import NewChunk, NewDocument
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import default_data_dir, load_passages
from graphctx_lab.bench.tree_child import run_in_tree

__all__ = ["run_ingest_bench"]

DEFAULT_DOCUMENTS = 1_000
SCOPE_COUNT = 10
ROOT = Path("/bench")
OPEN_ATTEMPTS = 5
WARM_UP_DOCUMENTS = 3
STORE_PASSES = 3  # store-alone passes per write mode; the median is reported
RESULT_PREFIX = "INGEST-BENCH-JSON "  # the baseline subprocess's result line


def bench_sources(data: Path, count: int) -> list[SourceDocument]:
    passages, _ = load_passages(data)
    if not passages:
        raise ConfigurationError(f"no passages under {data}")
    sources = []
    for i in range(count):
        p = passages[i % len(passages)]
        meta = DocumentMetadata(
            document_id=f"{p.key}-{i}", title=p.title, scopes=(f"s{i % SCOPE_COUNT}",)
        )
        sources.append(SourceDocument(f"bench://{p.key}/{i}", MediaType.TEXT, p.text, meta))
    return sources


def _pipeline_shape() -> tuple[int, int]:
    """(characters of text per batch, embedding workers) of the ingest pipeline under test."""
    try:
        from graphctx.ingest import batching  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # code before batched ingest: one document per embed call, one thread
        return 0, 1
    return batching.BATCH_CHARS, batching.embed_workers()


def _embed_chars() -> int:
    """Characters of text per embedding task of the pipeline under test (0: one document)."""
    try:
        from graphctx.ingest import batching  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return 0
    return int(getattr(batching, "EMBED_CHARS", batching.BATCH_CHARS))


def _pipeline_calls(embedder: UniversalSentenceEncoderEmbedder) -> Any:
    """The pipeline's embedding call over one task's documents (chunk texts per document)."""
    try:
        from graphctx.embed.port import embed_each  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # code before shared calls: one call per document
        return lambda documents: [embedder.embed_documents(texts) for texts in documents]
    return lambda documents: embed_each(embedder, documents)


def _tasks(documents: list[list[str]], chars: int) -> list[list[list[str]]]:
    """Documents cut, in order, into tasks of ``chars`` characters of text (one each if 0)."""
    tasks: list[list[list[str]]] = [[]]
    held = 0
    for texts in documents:
        if tasks[-1] and held >= chars:
            tasks.append([])
            held = 0
        tasks[-1].append(texts)
        held += sum(len(t) for t in texts)
    return tasks


def _chunked(sources: Sequence[SourceDocument]) -> list[list[str]]:
    return [[span.text for span in chunk_document(s)] for s in sources]


def measure_embedder(
    embedder: UniversalSentenceEncoderEmbedder, documents: list[list[str]]
) -> dict[str, Any]:
    texts = [text for chunk_texts in documents for text in chunk_texts]
    _, workers = _pipeline_shape()
    embed_chars = _embed_chars()
    batches: list[list[str]] = [[]]
    for text in texts:  # the pipeline's embedding tasks (64 texts for code without them)
        held = sum(len(t) for t in batches[-1]) if embed_chars else len(batches[-1])
        if held >= (embed_chars or 64):
            batches.append([])
        batches[-1].append(text)
    started = time.perf_counter()
    for b in batches:
        embedder.embed_documents(b)
    one = len(texts) / (time.perf_counter() - started)
    threads = max(2, workers)
    with ThreadPoolExecutor(threads) as pool:
        started = time.perf_counter()
        list(pool.map(embedder.embed_documents, batches))
        many = len(texts) / (time.perf_counter() - started)
    with ThreadPoolExecutor(threads) as pool:  # one call per document
        started = time.perf_counter()
        list(pool.map(embedder.embed_documents, documents))
        per_document = len(texts) / (time.perf_counter() - started)
    with ThreadPoolExecutor(threads) as pool:  # the pipeline's calls, per embedding task
        started = time.perf_counter()
        list(pool.map(_pipeline_calls(embedder), _tasks(documents, embed_chars)))
        pipeline_calls = len(texts) / (time.perf_counter() - started)
    return {
        "chunks": len(texts),
        "batches": len(batches),
        "one_thread_chunks_per_s": round(one, 1),
        "threads": threads,
        "threads_chunks_per_s": round(many, 1),
        "best_chunks_per_s": round(max(one, many), 1),
        "per_document_threads_chunks_per_s": round(per_document, 1),
        "pipeline_calls_threads_chunks_per_s": round(pipeline_calls, 1),
    }


def _prepared(
    sources: Sequence[SourceDocument],
    texts: list[list[str]],
    embedder: UniversalSentenceEncoderEmbedder,
    namespace: str,
) -> list[tuple[NewDocument, list[NewChunk]]]:
    defaults = IngestDefaults(namespace=namespace, source_uri_prefix="bench://")
    flat = [t for chunk_texts in texts for t in chunk_texts]
    vectors = embedder.embed_documents(flat)
    out, at = [], 0
    for source in sources:
        spans = chunk_document(source)
        chunks = [
            NewChunk(s.ordinal, s.start_char, s.end_char, s.text, vectors[at + i], s.heading_path)
            for i, s in enumerate(spans)
        ]
        at += len(spans)
        out.append((build_document(source, ROOT, defaults), chunks))
    return out


async def _write_store_alone(
    store: GraphStore,
    prepared: list[tuple[NewDocument, list[NewChunk]]],
    name: str,
    batched: bool,
) -> float:
    chunks = sum(len(c) for _, c in prepared)
    batch_chars, _ = _pipeline_shape()
    batch_write = getattr(store, "write_documents", None)
    started = time.perf_counter()
    if batched and batch_write is not None and batch_chars:
        from graphctx.store.records import DocumentWrite  # type: ignore[attr-defined,unused-ignore]

        batch: list[Any] = []
        held = 0
        for document, doc_chunks in prepared:
            batch.append(DocumentWrite(document, tuple(doc_chunks)))
            held += len(document.text)
            if held >= batch_chars:
                await batch_write(prepared[0][0].namespace, batch, name)
                batch, held = [], 0
        if batch:
            await batch_write(prepared[0][0].namespace, batch, name)
    else:
        for document, doc_chunks in prepared:
            await store.write_document(document, doc_chunks, name)
    return chunks / (time.perf_counter() - started)


def _in_namespace(
    prepared: list[tuple[NewDocument, list[NewChunk]]], namespace: str
) -> list[tuple[NewDocument, list[NewChunk]]]:
    return [(replace(document, namespace=namespace), chunks) for document, chunks in prepared]


async def measure_backend(
    store: GraphStore,
    sources: Sequence[SourceDocument],
    texts: list[list[str]],
    embedder: UniversalSentenceEncoderEmbedder,
) -> dict[str, Any]:
    run = uuid.uuid4().hex[:8]
    rates: dict[str, Any] = {}
    prepared = _prepared(sources, texts, embedder, "bench")
    for batched in (True, False):
        # A few documents first, untimed, in another namespace: the server plans the
        # statements of this write path once (seconds on a busy server), as a running
        # service would have done long before.
        warm = _in_namespace(prepared[:WARM_UP_DOCUMENTS], f"warm{run}{batched:d}")
        await _write_store_alone(store, warm, embedder.name, batched)
        mode = "batched" if batched else "one_by_one"
        passes = [
            await _write_store_alone(
                store,
                _in_namespace(prepared, f"bench{mode[0]}{n}{run}"),
                embedder.name,
                batched,
            )
            for n in range(STORE_PASSES)
        ]
        rates[f"store_{mode}_chunks_per_s"] = round(statistics.median(passes), 1)
        rates[f"store_{mode}_passes"] = [round(rate, 1) for rate in passes]
    namespace = f"benche{run}"
    defaults = IngestDefaults(namespace=namespace, source_uri_prefix="bench://")
    started = time.perf_counter()
    report = await ingest_sources(store, embedder, sources, ROOT, defaults)
    elapsed = time.perf_counter() - started
    if report.errors:
        raise RuntimeError(f"bench ingest reported errors: {report.errors[:3]}")
    rates["end_to_end_chunks_per_s"] = round(report.chunks_written / elapsed, 1)
    rates["chunks"] = report.chunks_written
    return rates


@contextlib.contextmanager
def _neo4j_location() -> Iterator[tuple[str, tuple[str, str], str]]:
    uri = os.environ.get("NEO4J_URI")
    if uri:
        from graphctx.store.neo4j import parse_location

        where = parse_location(uri, os.environ)
        yield where.uri, where.auth, where.database
        return
    from graphctx_lab.neo4j_launcher import running_neo4j

    with running_neo4j() as server:
        yield server.uri, server.auth, server.database


async def _on_neo4j(
    where: tuple[str, tuple[str, str], str],
    sources: Sequence[SourceDocument],
    texts: list[list[str]],
    embedder: UniversalSentenceEncoderEmbedder,
) -> dict[str, Any]:
    from graphctx.store.neo4j import Neo4jGraphStore

    store = Neo4jGraphStore(*where)
    for attempt in range(OPEN_ATTEMPTS):  # a fresh server on a busy machine answers late
        try:
            await store.open()
            break
        except StoreUnavailableError:
            if attempt == OPEN_ATTEMPTS - 1:
                raise
    try:
        await store.init_schema()
        return await measure_backend(store, sources, texts, embedder)
    finally:
        await store.close()


async def _on_sqlite(
    sources: Sequence[SourceDocument],
    texts: list[list[str]],
    embedder: UniversalSentenceEncoderEmbedder,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="graphctx-bench-ingest-") as tmp:
        store = SqliteGraphStore(Path(tmp) / "bench.sqlite")
        await store.open()
        try:
            return await measure_backend(store, sources, texts, embedder)
        finally:
            await store.close()


def measure(
    data: Path, documents: int, where: tuple[str, tuple[str, str], str] | None
) -> dict[str, Any]:
    """Every figure of one code tree (the one imported): embedder, then each backend."""
    sources = bench_sources(data, documents)
    texts = _chunked(sources)
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.open()
    result: dict[str, Any] = {"documents": documents, "embedder": measure_embedder(embedder, texts)}
    result["sqlite"] = asyncio.run(_on_sqlite(sources, texts, embedder))
    if where is not None:
        result["neo4j"] = asyncio.run(_on_neo4j(where, sources, texts, embedder))
    best = result["embedder"]["best_chunks_per_s"]
    calls = result["embedder"]["pipeline_calls_threads_chunks_per_s"]
    for backend in ("sqlite", "neo4j"):
        if backend in result:
            figures = result[backend]
            end_to_end = figures["end_to_end_chunks_per_s"]
            figures["end_to_end_over_embedder"] = round(end_to_end / best, 3)
            figures["end_to_end_over_pipeline_calls"] = round(end_to_end / calls, 3)
    return result


def _baseline(src: Path, data: Path, documents: int, where: tuple[str, Any, str] | None) -> Any:
    env = dict(os.environ)
    if where is not None:
        env.update(NEO4J_URI=where[0], NEO4J_USER=where[1][0], NEO4J_PASSWORD=where[1][1])
        env["NEO4J_DATABASE"] = where[2]
    else:
        env.pop("NEO4J_URI", None)
    args = ["--data", str(data), "--documents", str(documents), "--child"]
    args += [] if where is not None else ["--no-neo4j"]
    return run_in_tree(
        src, "graphctx_lab.bench.ingest", args, RESULT_PREFIX, timeout_s=3600, env=env
    )


RATIO_KEYS = (
    "store_batched_chunks_per_s",
    "store_one_by_one_chunks_per_s",
    "end_to_end_chunks_per_s",
)


def _ratios(current: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    ratios: dict[str, Any] = {}
    for backend in ("sqlite", "neo4j"):
        if backend in current and backend in old:
            ratios[backend] = {
                key: round(current[backend][key] / old[backend][key], 2) for key in RATIO_KEYS
            }
    return ratios


def render_markdown(report: dict[str, Any]) -> str:
    runs = {"current": report["current"]}
    if "baseline" in report:
        runs["baseline"] = report["baseline"]
    lines = [
        f"# graphctx bench ingest ({report['current']['documents']} documents)",
        "",
        "| code | backend | embedder alone (1 thread / threads) | embedder, one call per"
        " document (threads) | embedder, the pipeline's calls (threads) | store alone, batched"
        " | store alone, one by one | end to end | end to end / embedder"
        " | end to end / pipeline's calls |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, run in runs.items():
        e = run["embedder"]
        embed = f"{e['one_thread_chunks_per_s']} / {e['threads_chunks_per_s']} ({e['threads']})"
        per_document = e.get("per_document_threads_chunks_per_s", "-")  # older code: not taken
        calls = e.get("pipeline_calls_threads_chunks_per_s", "-")
        for backend in ("sqlite", "neo4j"):
            if backend not in run:
                continue
            b = run[backend]
            lines.append(
                f"| {label} | {backend} | {embed} | {per_document} | {calls}"
                f" | {b['store_batched_chunks_per_s']} | {b['store_one_by_one_chunks_per_s']}"
                f" | {b['end_to_end_chunks_per_s']} | {b['end_to_end_over_embedder']}"
                f" | {b.get('end_to_end_over_pipeline_calls', '-')} |"
            )
    for backend, ratios in report.get("ratios_current_over_baseline", {}).items():
        parts = ", ".join(f"{k.removesuffix('_chunks_per_s')} {v}x" for k, v in ratios.items())
        lines.append(f"\ncurrent / baseline on {backend}: {parts}")
    lines.append("\nAll figures are chunks/s.")
    return "\n".join(lines) + "\n"


def run_ingest_bench(
    out: Path,
    data: Path | None = None,
    documents: int = DEFAULT_DOCUMENTS,
    baseline: Path | None = None,
    neo4j: bool = True,
) -> int:
    """Measure, write ``out/ingest.json`` and ``out/ingest.md``, print the table."""
    data = data or default_data_dir()
    if baseline is not None and not (baseline / "graphctx" / "__init__.py").is_file():
        raise ConfigurationError(f"--baseline {baseline}: expected a src/ with graphctx/")
    out.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        where = stack.enter_context(_neo4j_location()) if neo4j else None
        report: dict[str, Any] = {
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "load_average": os.getloadavg(),
            },
        }
        if baseline is not None:  # first, so the current run is not favoured by a warm server
            report["baseline_src"] = str(baseline)
            report["baseline"] = _baseline(baseline, data, documents, where)
        report["current"] = measure(data, documents, where)
    if "baseline" in report:
        report["ratios_current_over_baseline"] = _ratios(report["current"], report["baseline"])
    (out / "ingest.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    table = render_markdown(report)
    (out / "ingest.md").write_text(table, encoding="utf-8")
    print(table)
    print(f"wrote {out / 'ingest.json'} and {out / 'ingest.md'}")
    return 0


def _main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--documents", type=int, default=DEFAULT_DOCUMENTS)
    parser.add_argument("--out", type=Path, default=Path("bench-results"))
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--no-neo4j", action="store_true")
    parser.add_argument("--child", action="store_true", help="print one JSON line (baseline)")
    args = parser.parse_args()
    if args.child:
        where = None
        if not args.no_neo4j:
            with _neo4j_location() as found:
                where = found
                result = measure(args.data or default_data_dir(), args.documents, where)
        else:
            result = measure(args.data or default_data_dir(), args.documents, None)
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return 0
    return run_ingest_bench(
        args.out, args.data, args.documents, args.baseline, neo4j=not args.no_neo4j
    )


if __name__ == "__main__":
    sys.exit(_main())
