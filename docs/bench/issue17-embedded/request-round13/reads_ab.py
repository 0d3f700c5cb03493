"""The store's reads of a request, alone, on two stores opened on the same file side by
side: one as the tree opens it, one with extra PRAGMAs on each reader (GRAPHCTX_AB_PRAGMAS,
e.g. "mmap_size=1073741824"). Interleaved query by query, order alternated; wall ms of
fulltext_search, vector_search, fetch_chunks of the fused pool (the two lists' first 40
ids) and the gate's re-read (its first 15).

Usage: reads_ab.py STORE [rounds]
"""
import asyncio, os, random, statistics, sys, time
from pathlib import Path

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.sqlite import schema
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, WARM_UP, load_passages, query_plan

PRAGMAS = [p for p in os.environ.get("GRAPHCTX_AB_PRAGMAS", "mmap_size=1073741824").split(";") if p]
_connect = schema.connect


class Tuned(SqliteGraphStore):
    def _reader(self):
        fresh = getattr(self._local, "conn", None) is None
        conn = super()._reader()
        if fresh:
            for p in PRAGMAS:
                conn.execute(f"PRAGMA {p}")
        return conn


async def one(store, q, s, vec):
    out = {}
    dl = time.monotonic() + 10
    t = time.perf_counter(); ft = await store.fulltext_search(BENCH_NAMESPACE, q, s, 50, dl); out["fulltext"] = time.perf_counter() - t
    t = time.perf_counter(); vh = await store.vector_search(BENCH_NAMESPACE, vec, s, 50, dl); out["vector"] = time.perf_counter() - t
    ids = list(dict.fromkeys([h.chunk_id for pair in zip(ft, vh) for h in pair]))[:40]
    t = time.perf_counter(); await store.fetch_chunks(BENCH_NAMESPACE, ids, s, dl); out["fetch"] = time.perf_counter() - t
    t = time.perf_counter(); await store.fetch_chunks(BENCH_NAMESPACE, ids[:15], s, dl); out["gate"] = time.perf_counter() - t
    return out


async def run(path, rounds):
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    embedder = UniversalSentenceEncoderEmbedder()
    vecs = [embedder.embed_query(q) for q, _ in plan]
    stores = {"base": SqliteGraphStore(Path(path)), "tuned": Tuned(Path(path))}
    for st in stores.values():
        await st.open()
    res = {k: {} for k in stores}
    for r in range(rounds):
        for n, (q, s) in enumerate(plan):
            order = list(stores) if n % 2 else list(stores)[::-1]
            for k in order:
                got = await one(stores[k], q, frozenset(s), vecs[n])
                if n >= WARM_UP:
                    for part, v in got.items():
                        res[k].setdefault(part, []).append(v * 1000)
    print("pragmas:", PRAGMAS)
    for part in res["base"]:
        b, t = res["base"][part], res["tuned"][part]
        print(f"{part:9s} base p50 {statistics.median(b):6.3f} mean {statistics.mean(b):6.3f} | tuned p50 {statistics.median(t):6.3f} mean {statistics.mean(t):6.3f}")
    for st in stores.values():
        await st.close()

asyncio.run(run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2))
