import asyncio, random, time, glob, statistics, sys
from collections import defaultdict
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline
import graphctx.store.sqlite.fulltext as F
import graphctx.store.sqlite.visible_bm25 as V
from graphctx.text.lexical import query_terms
T = defaultdict(float); C = defaultdict(int)
def timed(obj, name, label, cnt=None):
    f = getattr(obj, name)
    def w(*a, **k):
        t = time.perf_counter(); c = time.thread_time(); r = f(*a, **k)
        T[label] += time.perf_counter() - t; T[label + ".cpu"] += time.thread_time() - c
        if cnt: C[label + ".n"] += cnt(a)
        return r
    setattr(obj, name, w)
timed(V, "_holding", "holding")
timed(V._Pool, "read", "read", lambda a: len(a[1]))
timed(V._Pool, "best", "best")
timed(V, "_with_chunk_ids", "ids")
timed(F, "rank_visible", "rank_visible")
timed(F, "prune_common_terms", "prune")
async def main():
    path = Path(glob.glob(sys.argv[1] + "/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path); await store.open()
    for q, s in plan[:10]:
        await store.fulltext_search(B.BENCH_NAMESPACE, q, frozenset(s), 50, far_deadline())
    conn = store._reader()
    gen = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
    stats = store._stats.stats_for(conn, B.BENCH_NAMESPACE, gen)
    per = defaultdict(list)
    for rep in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
      for q, s in plan[5:]:
        terms = query_terms(q)
        T.clear(); C.clear()
        t = time.perf_counter(); c = time.thread_time()
        F.search(conn, stats, B.BENCH_NAMESPACE, terms, frozenset(s), 50)
        T["search"] = time.perf_counter() - t; T["search.cpu"] = time.thread_time() - c
        for k, v in T.items(): per[k].append(v*1000)
        for k, v in C.items(): per[k].append(v)
        per["terms"].append(len(terms))
    for k in sorted(per):
        v = per[k]; print(f"{k:18s} p50 {statistics.median(v):7.2f} mean {statistics.mean(v):7.2f} p95 {statistics.quantiles(v, n=20)[-1]:7.2f}")
asyncio.run(main())
