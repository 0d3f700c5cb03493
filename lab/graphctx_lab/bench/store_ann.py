"""``graphctx bench store --ann``: the same queries with the approximate vector index.

On the size's store file, after the exact run: open a store with ``ann=AnnSettings()``, read
its matrix, build the index (timed; its memory is the resident-set growth over the build and
the index's own byte count), run the same query plan through the provider (latency per
stage), then ask the exact store and the ANN store for the same query vectors and scopes and
report recall@10 and @50 of the ANN's chunks against the exact scan's.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np

from graphctx.context import default_token_counter
from graphctx.embed.port import Embedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.ann import AnnSettings
from graphctx.store.sqlite.store import SqliteGraphStore

__all__ = ["bench_ann", "current_rss_mb"]

RunQueries = Callable[
    [ContextProvider, list[tuple[str, list[str]]]],
    Awaitable[tuple[list[float], dict[str, list[float]], int]],
]
RECALL_AT = (10, 50)
NO_SCOPE = frozenset({"-no-such-scope-"})  # a search that reads the matrix and scores nothing


def current_rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return round(pages * 4096 / 2**20, 1)


async def bench_ann(
    path: Path,
    namespace: str,
    embedder: Embedder,
    plan: list[tuple[str, list[str]]],
    warm_up: int,
    run_queries: RunQueries,
) -> dict[str, object]:
    from graphctx_lab.bench.store import percentiles

    settings = AnnSettings(min_visible_rows=1)  # the index answers every search here
    store = SqliteGraphStore(path, ann=settings)
    exact = SqliteGraphStore(path)
    await store.open()
    await exact.open()
    try:
        far = time.monotonic() + 7200  # a 1M matrix loads for minutes on a loaded machine
        vector = np.asarray(embedder.embed_query("warm up"), dtype=np.float32)
        await store.vector_search(namespace, vector, NO_SCOPE, 1, far)
        rss_matrix = current_rss_mb()
        report = await store.build_vector_index(namespace)
        rss_index = current_rss_mb()
        provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
        latencies, stages, partial = await run_queries(provider, plan)
        await exact.vector_search(namespace, vector, NO_SCOPE, 1, far)
        found = {k: 0 for k in RECALL_AT}
        wanted = {k: 0 for k in RECALL_AT}
        ann_ms: list[float] = []
        exact_ms: list[float] = []
        for question, scopes in plan[warm_up:]:
            q = np.asarray(embedder.embed_query(question), dtype=np.float32)
            allowed = frozenset(scopes)
            for k in RECALL_AT:
                t0 = time.perf_counter()
                truth = await exact.vector_search(namespace, q, allowed, k, far)
                t1 = time.perf_counter()
                approx = await store.vector_search(namespace, q, allowed, k, far)
                t2 = time.perf_counter()
                if k == max(RECALL_AT):
                    exact_ms.append((t1 - t0) * 1000)
                    ann_ms.append((t2 - t1) * 1000)
                found[k] += len({h.chunk_id for h in truth} & {h.chunk_id for h in approx})
                wanted[k] += len(truth)
    finally:
        await store.close()
        await exact.close()
    return {
        "settings": {
            "index": "faiss IVF-SQ8, inner product, IDSelectorBitmap of the visible rows",
            "lists": report.lists,
            "nprobe": settings.nprobe,
            "oversample": settings.oversample,
            "min_visible_rows": settings.min_visible_rows,
        },
        "build_s": round(report.seconds, 1),
        "index_mb": round(report.index_bytes / 2**20, 1),
        "rss_mb_with_matrix": rss_matrix,
        "rss_mb_with_matrix_and_index": rss_index,
        "recall": {f"@{k}": round(found[k] / max(1, wanted[k]), 4) for k in RECALL_AT},
        "store_vector_search_ms": {
            "exact": percentiles(exact_ms),
            "ann": percentiles(ann_ms),
        },
        "partial_responses": partial,
        "retrieve_ms": percentiles(latencies),
        "stage_ms": {name: percentiles(values) for name, values in sorted(stages.items())},
    }
