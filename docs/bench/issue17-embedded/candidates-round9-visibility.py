import asyncio, random, time, glob, statistics, sys
from pathlib import Path
import numpy as np
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore, _generation
import graphctx.store.sqlite.fulltext as F
from graphctx.store.sqlite.visible_bm25 import _holding
from graphctx.store.sqlite.fts5_query import prune_common_terms
from graphctx.text.lexical import query_terms
async def main():
    path = Path(glob.glob(sys.argv[1] + "/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path); await store.open()
    conn = store._reader(); ns = B.BENCH_NAMESPACE
    stats = store._stats.stats_for(conn, ns, _generation(conn))
    rows = stats.rows
    table = F.table_of(conn, ns)
    cases = []
    for q, s in plan[5:]:
        terms = query_terms(q); kept = prune_common_terms(terms, stats.document_frequency(conn, table, terms), stats.total)
        cases.append(([_holding(conn, table, t) for t in kept], frozenset(s)))
    print("hits per query p50", statistics.median(sum(len(h) for h in hs) for hs, _ in cases))
    def old(hs, s):
        meets = np.fromiter((not k.isdisjoint(s) for k in rows.keys), dtype=np.bool_, count=len(rows.keys))
        out = []
        for h in hs:
            found = np.minimum(np.searchsorted(rows.rowids, h), rows.rowids.shape[0] - 1)
            out.append(np.sort(h[(rows.rowids[found] == h) & meets[rows.key_index[found]]]))
        shown = np.unique(np.concatenate(out)); rows_l = stats.lengths[np.searchsorted(rows.rowids, shown)]
        return shown
    def new(hs, s):
        out = [rows.visible_among(h, s) for h in hs]
        shown, at = rows.union(out); stats.lengths[at]
        return shown
    for r in range(3):
        for f in (old, new):
            t = time.perf_counter()
            for hs, s in cases: f(hs, s)
            print(f.__name__, round((time.perf_counter() - t) / len(cases) * 1000, 3), "ms per query")
    assert all(np.array_equal(old(h, s), new(h, s)) for h, s in cases)
asyncio.run(main())
