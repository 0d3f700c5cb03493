"""Round 12: CPU seconds (process time) and wall time of the embedder alone and of end-to-end
ingest, for the code tree on PYTHONPATH; CPU time holds up better than wall time on a loaded
machine. Prints one JSON line. Run alternately per tree:

    PYTHONPATH=<tree>/src:<tree>/lab python docs/bench/issue17-ingest/cpu_round12.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
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
    return result, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    sources = bench_sources(Path(os.environ.get("GRAPHCTX_DATA", "/work/shared/data")), 1000)
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.open()
    embedder.embed_each([["warm-up"]])
    docs = _chunked(sources)
    tasks = _tasks(docs, batching.EMBED_CHARS)
    flat = [[text for texts in task for text in texts] for task in tasks]
    chunks = sum(map(len, docs))
    out: dict[str, object] = {"load": os.getloadavg()[0], "chunks": chunks}
    with ThreadPoolExecutor(2) as pool:
        _, cpu, wall = timed(lambda: list(pool.map(embedder.embed_documents, flat)))
    out["embedder"] = {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
    with ThreadPoolExecutor(2) as pool:
        _, cpu, wall = timed(lambda: list(pool.map(embedder.embed_each, tasks)))
    out["pipeline_calls"] = {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}

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

    cpu, wall = asyncio.run(ingest())
    out["end_to_end"] = {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
