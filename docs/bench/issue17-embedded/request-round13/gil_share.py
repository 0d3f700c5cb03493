"""How much of each candidate part holds the GIL: a pure-Python spinner thread counts beside
the part (run in the main thread), against the spinner beside time.sleep for the same wall
time. share = 1 - rate(beside part) / rate(beside sleep). Parts: the query embedding, the
full-text search's work, the vector search's work (the bench's 105 requests).

Usage: gil_share.py STORE
"""
import asyncio, random, statistics, sys, threading, time
from pathlib import Path

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan

count = 0
running = True


def spin():
    global count
    while running:
        count += 1


async def run(path):
    global running
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(path))
    await store.open()
    embedder = UniversalSentenceEncoderEmbedder()
    vecs = [embedder.embed_query(q) for q, _ in plan]
    for q, s in plan[:5]:
        await store.fulltext_search(BENCH_NAMESPACE, q, frozenset(s), 50, time.monotonic() + 10)
        await store.vector_search(BENCH_NAMESPACE, vecs[0], frozenset(s), 50, time.monotonic() + 100)
    # the store's reads run on a worker thread: run them synchronously here instead
    orig = SqliteGraphStore._read

    async def inline(self, work, deadline):
        conn = self._reader()
        return work(conn)

    SqliteGraphStore._read = inline
    th = threading.Thread(target=spin, daemon=True)
    th.start()
    res = {"embed": [], "fulltext": [], "vector": []}
    for n, (q, s) in enumerate(plan):
        for key in res:
            c0, t0 = count, time.perf_counter()
            if key == "embed":
                embedder.embed_query(q)
            elif key == "fulltext":
                await store.fulltext_search(BENCH_NAMESPACE, q, frozenset(s), 50, time.monotonic() + 10)
            else:
                await store.vector_search(BENCH_NAMESPACE, vecs[n], frozenset(s), 50, time.monotonic() + 10)
            wall = time.perf_counter() - t0
            part_rate = (count - c0) / wall
            c1, t1 = count, time.perf_counter()
            time.sleep(wall)
            idle_rate = (count - c1) / (time.perf_counter() - t1)
            if wall < 0.0005 or idle_rate == 0:
                continue
            res[key].append((wall * 1000, 1 - part_rate / idle_rate))
    running = False
    for key, v in res.items():
        print(f"{key:9s} wall p50 {statistics.median(w for w, _ in v):6.2f} ms  GIL-held share p50 {statistics.median(g for _, g in v):5.2f}")
    SqliteGraphStore._read = orig
    await store.close()

asyncio.run(run(sys.argv[1]))
