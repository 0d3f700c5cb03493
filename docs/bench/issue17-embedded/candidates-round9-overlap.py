import asyncio, random, time, glob, statistics, sys
from collections import defaultdict
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore
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
    per = defaultdict(list)
    for rep in range(2):
      for n, (q, s) in enumerate(plan):
        s = frozenset(s)
        for label, rs in (("ft", [RN.FULLTEXT]), ("vec", [RN.VECTOR]), ("both", [RN.FULLTEXT, RN.VECTOR])):
            t = time.perf_counter(); c = time.process_time()
            await gather_candidates(store, emb, ns, q, s, rs, time.monotonic() + 10)
            if n >= 5 or rep:
                per[label + " wall"].append((time.perf_counter()-t)*1000); per[label + " cpu"].append((time.process_time()-c)*1000)
    for k in per:
        v = per[k]; print(f"{k:10s} p50 {statistics.median(v):7.2f} mean {statistics.mean(v):7.2f}")
asyncio.run(main())
