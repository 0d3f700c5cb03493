"""Per bench query: rows the current bound reads, rows whose exact score can reach the k-th,
and rows a length-aware bound would leave."""
import asyncio, random, glob, statistics, sys, math
from pathlib import Path
import numpy as np
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline
import graphctx.store.sqlite.fulltext as F
import graphctx.store.sqlite.visible_bm25 as V
from graphctx.store.bm25 import BM25_K1, BM25_B, idf
from graphctx.text.lexical import query_terms

READ = []
REP = []
orig_read = V._Pool.read
def read(self, picked):
    READ.append(len(picked)); orig_read(self, picked)
V._Pool.read = read
CAP = {}
orig_best = V._Pool.best
def best(self, st, visible, limit):
    CAP["pool"] = self; CAP["st"] = st; CAP["visible"] = visible
    return orig_best(self, st, visible, limit)
V._Pool.best = best

async def main():
    path = Path(glob.glob(sys.argv[1] + "/store-100000-*.sqlite")[0])
    allscopes = len(sys.argv) > 2 and sys.argv[2] == "all"
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path); await store.open()
    conn = store._reader()
    gen = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
    stats = store._stats.stats_for(conn, B.BENCH_NAMESPACE, gen)
    rows = []
    for q, s in plan[5:]:
        if allscopes: s = [f"s{i}" for i in range(B.SCOPE_COUNT)]
        READ.clear(); CAP.clear()
        hits = F.search(conn, stats, B.BENCH_NAMESPACE, query_terms(q), frozenset(s), 50)
        if not CAP: continue
        pool, st, visible = CAP["pool"], CAP["st"], CAP["visible"]
        nread = int(pool.done.sum())
        # read everything
        orig_read(pool, np.flatnonzero(~pool.done))
        n = pool.shown.shape[0]
        avg = max(1e-9, st.total_length / st.size)
        w = np.array([idf(visible, h) for h in st.holding])
        norm = BM25_K1 * ((1 - BM25_B) + (BM25_B * pool.lengths) / avg)
        tf = pool.frequencies.astype(float)
        score = (np.where(tf > 0, w * tf * (BM25_K1 + 1) / (tf + norm[:, None]), 0.0)).sum(1)
        kth = np.sort(score)[::-1][min(50, n) - 1] if n >= 50 else -math.inf
        oracle = int((score >= kth).sum())
        b0 = pool.matched @ (w * (BM25_K1 + 1))
        m = pool.matched.sum(1)
        x = np.maximum(pool.lengths - m + 1, 1).astype(float)
        g = x * (BM25_K1 + 1) / (x + norm)
        b1 = (pool.matched * w) @ np.ones(len(w)) * g
        rep = pool.frequencies >= 2
        known = np.where(pool.matched & ~rep, w * (BM25_K1 + 1) / (1 + norm[:, None]), 0.0).sum(1)
        b2 = known + (rep * w * (BM25_K1 + 1)).sum(1)
        need = (rep.any(1) & (b2 >= kth)).sum()
        REP.append((int(rep.any(1).sum()), int(need)))
        # tf=1 bound (not valid, only to see where reads go): score if every tf were 1
        rows.append((n, nread, oracle, int((b0 >= kth).sum()), int((b1 >= kth).sum()),
                     float(np.median(pool.lengths)), float(avg)))
    a = np.array(rows)
    for i, name in enumerate(["candidates", "read now", "exact>=kth", "bound0>=kth", "lenbound>=kth", "median len", "avgdl"]):
        v = a[:, i]
        print(f"{name:14s} p50 {np.median(v):8.1f} mean {v.mean():8.1f} p95 {np.quantile(v, .95):8.1f}")
asyncio.run(main())
r = np.array(REP); print('rows with a repeated term p50', np.median(r[:,0]), 'p95', np.quantile(r[:,0], .95), '; repeated rows reaching kth p50', np.median(r[:,1]), 'p95', np.quantile(r[:,1], .95), 'mean', r[:,1].mean())
