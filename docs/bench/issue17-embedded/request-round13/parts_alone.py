"""Each candidate part alone (one after the other, nothing beside it), on the bench's 105
requests: wall and thread CPU ms of the query embedding, the full-text search's work and the
vector search's work; with --profile, a cProfile of the full-text work.

Usage: parts_alone.py STORE [--profile]
"""
import asyncio, cProfile, pstats, random, statistics, sys, time
from pathlib import Path

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, WARM_UP, load_passages, query_plan


async def run(path, profile):
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(path))
    await store.open()
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.embed_query("warm")
    out = {k: ([], []) for k in ("embed", "fulltext", "vector")}
    prof = cProfile.Profile() if profile else None
    orig = SqliteGraphStore._read

    async def timed_read(self, work, deadline, *, key):
        def w(conn):
            s, c = time.perf_counter(), time.thread_time()
            if prof and key == "fulltext":
                prof.enable()
            try:
                return work(conn)
            finally:
                if prof and key == "fulltext":
                    prof.disable()
                out[key][0].append((time.perf_counter() - s) * 1000)
                out[key][1].append((time.thread_time() - c) * 1000)
        return await orig(self, w, deadline)

    for n, (q, scopes) in enumerate(plan):
        s, c = time.perf_counter(), time.thread_time()
        vec = embedder.embed_query(q)
        if n >= WARM_UP:
            out["embed"][0].append((time.perf_counter() - s) * 1000)
            out["embed"][1].append((time.thread_time() - c) * 1000)
        for key, call in (("fulltext", lambda: store.fulltext_search(BENCH_NAMESPACE, q, frozenset(scopes), 50, time.monotonic() + 10)),
                          ("vector", lambda: store.vector_search(BENCH_NAMESPACE, vec, frozenset(scopes), 50, time.monotonic() + 10))):
            SqliteGraphStore._read = lambda self, work, deadline, key=key: timed_read(self, work, deadline, key=key)
            await call()
            SqliteGraphStore._read = orig
            if n < WARM_UP:
                out[key][0].pop(); out[key][1].pop()
    for k, (wall, cpu) in out.items():
        print(f"{k:9s} wall p50 {statistics.median(wall):6.2f} mean {statistics.mean(wall):6.2f}  cpu p50 {statistics.median(cpu):6.2f} mean {statistics.mean(cpu):6.2f}")
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    await store.close()

asyncio.run(run(sys.argv[1], "--profile" in sys.argv))
