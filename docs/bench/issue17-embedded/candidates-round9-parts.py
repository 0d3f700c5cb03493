"""Serial cost of each candidate-stage part, and the gathered stage, per bench query."""
import asyncio, random, time, glob, statistics, sys
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.retrieve.candidates import gather_candidates
from graphctx.contract import RetrieverName
from graphctx.testing.fixtures import far_deadline
async def main():
    path = Path(glob.glob(sys.argv[1] + "/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path); await store.open()
    emb = UniversalSentenceEncoderEmbedder(); emb.open()
    R = {k: [] for k in ("embed", "ft", "vec", "serial", "gather", "gather.ft", "gather.vec")}
    ns = B.BENCH_NAMESPACE
    for n, (q, s) in enumerate(plan):
        s = frozenset(s)
        t = time.perf_counter(); v = emb.embed_query(q); e = time.perf_counter() - t
        t = time.perf_counter(); await store.fulltext_search(ns, q, s, 50, far_deadline()); f = time.perf_counter() - t
        t = time.perf_counter(); await store.vector_search(ns, v, s, 50, far_deadline()); w = time.perf_counter() - t
        t = time.perf_counter(); c = await gather_candidates(store, emb, ns, q, s, [RetrieverName.FULLTEXT, RetrieverName.VECTOR], time.monotonic() + 10); g = time.perf_counter() - t
        if n < 5: continue
        R["embed"].append(e*1000); R["ft"].append(f*1000); R["vec"].append(w*1000); R["serial"].append((e+f+w)*1000); R["gather"].append(g*1000)
        for rep in c.reports: R["gather." + rep.stage.split(".")[1][:3].replace("ful","ft")].append(rep.elapsed_ms)
    for k, v in R.items():
        print(f"{k:12s} p50 {statistics.median(v):7.2f} p95 {statistics.quantiles(v, n=20)[-1]:7.2f}")
    await store.close()
asyncio.run(main())
