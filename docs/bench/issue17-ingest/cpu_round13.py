"""Round 13: CPU seconds of the embedder alone (its own calls, 2 threads), of the pipeline's
calls and of end-to-end ingest, with end to end's CPU split by thread (embedding workers,
the event loop's thread, the store's hand-off threads), for the code tree on PYTHONPATH.
Prints one JSON line. Run alternately per tree:

    PYTHONPATH=<tree>/src:<tree>/lab python docs/bench/issue17-ingest/cpu_round13.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.ingest import batching
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.ingest import ROOT, _chunked, _tasks, bench_sources

def timed(work):  # type: ignore[no-untyped-def]
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return result, round(time.process_time() - cpu, 3), round(time.perf_counter() - wall, 3)


def main() -> None:
    sources = bench_sources(Path(os.environ.get("GRAPHCTX_DATA", "/work/shared/data")), 1000)
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.open()
    docs = _chunked(sources)
    tasks = _tasks(docs, batching.EMBED_CHARS)
    flat = [[text for texts in task for text in texts] for task in tasks]
    chunks = sum(map(len, docs))
    out: dict[str, object] = {"load": os.getloadavg()[0], "chunks": chunks}
    with ThreadPoolExecutor(2) as pool:
        _, cpu, wall = timed(lambda: list(pool.map(embedder.embed_documents, flat)))
    out["embedder"] = {"cpu_s": cpu, "wall_s": wall}
    with ThreadPoolExecutor(2) as pool:
        _, cpu, wall = timed(lambda: list(pool.map(embedder.embed_each, tasks)))
    out["pipeline_calls"] = {"cpu_s": cpu, "wall_s": wall}

    async def ingest() -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as tmp:
            store = SqliteGraphStore(Path(tmp) / "s.sqlite")
            await store.open()
            try:
                defaults = IngestDefaults(namespace="e2e", source_uri_prefix="bench://")
                cpu, wall = time.process_time(), time.perf_counter()
                report = await ingest_sources(store, embedder, sources, ROOT, defaults)
                assert report.chunks_written == chunks
                return time.process_time() - cpu, time.perf_counter() - wall
            finally:
                await store.close()

    spent: Counter[str] = Counter()
    original = threading.Thread.run

    def run(self: threading.Thread) -> None:  # every thread started from here: its CPU at exit
        try:
            original(self)
        finally:
            spent[self.name.split("_")[0].rstrip("0123456789-")] += time.thread_time()

    threading.Thread.run = run  # type: ignore[method-assign]
    main_cpu = time.thread_time()
    cpu, wall = asyncio.run(ingest())
    spent["main"] += time.thread_time() - main_cpu
    threading.Thread.run = original  # type: ignore[method-assign]
    out["end_to_end"] = {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
    out["end_to_end_threads_cpu_s"] = {k: round(v, 3) for k, v in sorted(spent.items())}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
