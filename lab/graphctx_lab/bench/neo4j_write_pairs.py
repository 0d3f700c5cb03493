"""Store-alone Neo4j ingest, an older tree against this one, in alternating pairs (issue 17).

What ``graphctx ingest`` asks of the store: ``Neo4jGraphStore.write_documents`` in the ingest
pipeline's batches (``BATCH_CHARS`` / ``BATCH_DOCUMENTS``, or ``--batch-chars`` /
``--batch-documents``), measured apart from embedding: the chunks get seeded random 512-d
vectors. Each round runs one pass of each tree, the order alternating from round to round, each
in a fresh process writing into a fresh namespace of the same server (``NEO4J_*``), after a few
untimed documents in another namespace (the server plans the statements once, as a running
service has long done). The ratio is taken within each round and the median over rounds is
reported, with every pass.

    python -m graphctx_lab.bench.neo4j_write_pairs --baseline /tmp/old/src --documents 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from graphctx.ingest.batching import BATCH_CHARS, BATCH_DOCUMENTS, BatchCutter, PendingDocument
from graphctx.ingest.chunking import chunk_document
from graphctx.ingest.pipeline import IngestDefaults, build_document
from graphctx.ingest.source import SourceDocument
from graphctx.store.records import DocumentWrite, NewChunk
from graphctx_lab.bench.ingest import ROOT, WARM_UP_DOCUMENTS, bench_sources
from graphctx_lab.bench.store import default_data_dir
from graphctx_lab.bench.tree_child import run_in_tree

__all__ = ["run_pairs"]

RESULT_PREFIX = "NEO4J-WRITE-PAIR-JSON "
DIMENSION = 512
CHILD_TIMEOUT_S = 1800


def _batches(
    writes: list[DocumentWrite], sources: list[SourceDocument], max_documents: int, max_chars: int
) -> list[list[DocumentWrite]]:
    """The pipeline's cut (``BatchCutter``), with the limits given."""
    cutter = BatchCutter(max_chars, max_documents)
    cut = [
        b
        for n, s in enumerate(sources)
        for b in cutter.add(PendingDocument(n, s, writes[n].document))
    ]
    cut.append(cutter.flush())
    return [[writes[p.index] for p in batch] for batch in cut if batch]


def _writes(documents: int, namespace: str) -> tuple[list[SourceDocument], list[DocumentWrite]]:
    sources = bench_sources(default_data_dir(), documents)
    defaults = IngestDefaults(namespace=namespace, source_uri_prefix="bench://")
    rng = np.random.default_rng(17)
    out = []
    for source in sources:
        spans = chunk_document(source)
        vectors = rng.standard_normal((len(spans), DIMENSION)).astype(np.float32)
        chunks = tuple(
            NewChunk(s.ordinal, s.start_char, s.end_char, s.text, vectors[i], s.heading_path)
            for i, s in enumerate(spans)
        )
        out.append(DocumentWrite(build_document(source, ROOT, defaults), chunks))
    return sources, out


async def _child(documents: int, max_documents: int, max_chars: int, init: bool) -> dict[str, Any]:
    from graphctx.store.neo4j import Neo4jGraphStore, parse_location

    where = parse_location(os.environ["NEO4J_URI"], os.environ)
    store = Neo4jGraphStore(where.uri, where.auth, where.database)
    await store.open()
    try:
        if init:
            await store.init_schema()
        run = uuid.uuid4().hex[:8]
        sources, writes = _writes(documents, "bench")
        warm = [
            replace(w, document=replace(w.document, namespace=f"warm{run}"))
            for w in writes[:WARM_UP_DOCUMENTS]
        ]
        await store.write_documents(f"warm{run}", warm, "random")
        namespace = f"bench{run}"
        timed = [replace(w, document=replace(w.document, namespace=namespace)) for w in writes]
        batches = _batches(timed, sources, max_documents, max_chars)
        chunks = sum(len(w.chunks) for w in timed)
        started = time.perf_counter()
        for batch in batches:
            results = await store.write_documents(namespace, batch, "random")
            if any(isinstance(r, Exception) for r in results):
                raise RuntimeError(f"bench write refused: {results[:3]}")
        seconds = time.perf_counter() - started
    finally:
        await store.close()
    return {
        "chunks": chunks,
        "batches": len(batches),
        "seconds": round(seconds, 3),
        "chunks_per_s": round(chunks / seconds, 1),
    }


def _pass(
    src: Path, documents: int, max_documents: int, max_chars: int, init: bool = False
) -> dict[str, Any]:
    args = ["--child", "--documents", str(documents), "--batch-documents", str(max_documents)]
    args += ["--batch-chars", str(max_chars)] + (["--init"] if init else [])
    result: dict[str, Any] = run_in_tree(
        src, "graphctx_lab.bench.neo4j_write_pairs", args, RESULT_PREFIX, timeout_s=CHILD_TIMEOUT_S
    )
    return result


def run_pairs(
    baseline: Path, documents: int, rounds: int, max_documents: int, max_chars: int
) -> dict[str, Any]:
    current = Path(__file__).resolve().parents[3] / "src"
    # The schema once, by this tree: a pass never runs init_schema, so this tree's init does
    # not convert the older tree's TermCount nodes (untimed, but heavy) before its own passes.
    _pass(current, 2 * WARM_UP_DOCUMENTS, max_documents, max_chars, init=True)
    passes: list[dict[str, Any]] = []
    ratios = []
    for n in range(rounds):
        order = [("baseline", baseline), ("current", current)]
        if n % 2:
            order.reverse()
        got = {name: _pass(src, documents, max_documents, max_chars) for name, src in order}
        ratio = got["current"]["chunks_per_s"] / got["baseline"]["chunks_per_s"]
        ratios.append(ratio)
        passes.append({"round": n, "first": order[0][0], **got, "ratio": round(ratio, 2)})
        print(json.dumps(passes[-1]), file=sys.stderr, flush=True)
    return {
        "documents": documents,
        "batch_documents": max_documents,
        "batch_chars": max_chars,
        "rounds": rounds,
        "baseline_src": str(baseline),
        "load_average": list(os.getloadavg()),
        "baseline_chunks_per_s": statistics.median(p["baseline"]["chunks_per_s"] for p in passes),
        "current_chunks_per_s": statistics.median(p["current"]["chunks_per_s"] for p in passes),
        "median_ratio": round(statistics.median(ratios), 2),
        "passes": passes,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="an older tree's src/")
    parser.add_argument("--documents", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batch-documents", type=int, default=BATCH_DOCUMENTS)
    parser.add_argument("--batch-chars", type=int, default=BATCH_CHARS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--init", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help="write the JSON result here")
    args = parser.parse_args(argv)
    if args.child:
        result = asyncio.run(
            _child(args.documents, args.batch_documents, args.batch_chars, args.init)
        )
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return
    if args.baseline is None:
        parser.error("--baseline is required")
    report = run_pairs(
        args.baseline, args.documents, args.rounds, args.batch_documents, args.batch_chars
    )
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
