import asyncio, random, time, glob, statistics
from collections import defaultdict
from pathlib import Path
import numpy as np
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline
import graphctx.store.sqlite.fulltext as F
import graphctx.store.sqlite.visible_bm25 as V
T = defaultdict(float); C = defaultdict(int); per = defaultdict(list)
oh = V._holding
def holding(conn, table, term):
    t = time.perf_counter(); r = oh(conn, table, term); T["irregular MATCH" if table.endswith("_irregular") else "MATCH"] += time.perf_counter() - t; return r
V._holding = holding
orr = V._Pool.read
def read(self, picked):
    t = time.perf_counter(); orr(self, picked); T["read+count"] += time.perf_counter() - t; C["rows read"] += len(picked); C["reads"] += 1
V._Pool.read = read
ob = V._Pool.best
def best(self, *a):
    t = time.perf_counter(); r = ob(self, *a); T["best_rows"] += time.perf_counter() - t; return r
V._Pool.best = best
orv = V.rank_visible
def rv(*a, **k):
    t = time.perf_counter(); r = orv(*a, **k); T["rank_visible"] += time.perf_counter() - t; return r
F.rank_visible = rv
async def main():
    path = Path(glob.glob("/tmp/h-fts-store-new/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path); await store.open()
    for q, s in plan[:10]:
        await store.fulltext_search(B.BENCH_NAMESPACE, q, frozenset(s), 50, far_deadline())
    for q, s in plan[10:]:
        T.clear(); C.clear()
        t = time.perf_counter()
        await store.fulltext_search(B.BENCH_NAMESPACE, q, frozenset(s), 50, far_deadline())
        T["fulltext_search"] = time.perf_counter() - t
        for k, v in T.items(): per[k].append(v * 1000)
        for k, v in C.items(): per[k].append(v)
    for k, v in per.items(): print(f"{k:18s} p50 {statistics.median(v):8.2f} mean {statistics.mean(v):8.2f} n={len(v)}")
    await store.close()
asyncio.run(main())
