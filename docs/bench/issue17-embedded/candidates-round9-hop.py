import asyncio, random, time, glob, statistics, sys
from collections import defaultdict
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore, _generation, _chunk_ids
from graphctx.store.sqlite.vectors import top_k_visible
from graphctx.store.records import ChunkHit
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.retrieve.candidates import gather_candidates
from graphctx.contract import RetrieverName as RN
async def main():
    path = Path(glob.glob(sys.argv[1] + "/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path); await store.open()
    emb = UniversalSentenceEncoderEmbedder(); emb.open()
    ns = B.BENCH_NAMESPACE
    async def merged(q, s):
        deadline = time.monotonic() + 10
        def work(conn):
            v = emb.embed_query(q)
            data = store._vectors.matrix_for(conn, ns, _generation(conn))
            best = top_k_visible(data, v, s, 50)
            ids = _chunk_ids(conn, [r for r, _ in best])
            return [ChunkHit(ids[r], sc) for r, sc in best]
        async def timed(c):
            await c; return time.perf_counter()
        t = time.perf_counter()
        a, b = await asyncio.gather(timed(store.fulltext_search(ns, q, s, 50, deadline)), timed(store._read(work, deadline)))
        return (a - t) * 1000, (b - t) * 1000
    per = defaultdict(list)
    for rep in range(2):
      for n, (q, s) in enumerate(plan):
        s = frozenset(s)
        t = time.perf_counter()
        c = await gather_candidates(store, emb, ns, q, s, [RN.FULLTEXT, RN.VECTOR], time.monotonic() + 10)
        w1 = (time.perf_counter() - t) * 1000
        t = time.perf_counter(); f, v = await merged(q, s); w2 = (time.perf_counter() - t) * 1000
        if n < 5: continue
        per["current gather"].append(w1); per["merged gather"].append(w2)
        per["current vec"].append([r.elapsed_ms for r in c.reports if r.stage.endswith("vector")][0]); per["merged vec"].append(v)
        per["current ft"].append([r.elapsed_ms for r in c.reports if r.stage.endswith("fulltext")][0]); per["merged ft"].append(f)
    for k in per:
        v = per[k]; print(f"{k:16s} p50 {statistics.median(v):7.2f} mean {statistics.mean(v):7.2f}")
asyncio.run(main())
