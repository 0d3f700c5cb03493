"""Whole-request p50 with the real vector scan vs an oracle (precomputed answer, zero scan
cost): the most any faster scan can save. Bench requests, /tmp/s100k, alternated rounds."""
import asyncio, json, os, statistics, sys, time
from pathlib import Path
import numpy as np
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite import store as store_mod
from graphctx.store.sqlite.store import SqliteGraphStore

real = store_mod.top_k_visible
memo: dict[tuple[bytes, frozenset[str]], list] = {}
scan_ms: list[float] = []
def recording(data, query, scopes, limit):
    t = time.perf_counter(); r = real(data, query, scopes, limit)
    scan_ms.append((time.perf_counter() - t) * 1000)
    memo[(np.asarray(query).tobytes(), scopes)] = r
    return r
def oracle(data, query, scopes, limit):
    return memo[(np.asarray(query).tobytes(), scopes)]

plan = json.loads(Path("/tmp/h-vec8/plan.json").read_text())
async def main(rounds: int):
    path = next(Path("/tmp/s100k").glob("store-100000-*.sqlite"))
    store = SqliteGraphStore(path); await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    async def run():
        lat=[]; st={}
        for n,(question, scopes) in enumerate(plan):
            req = ContextRequest(query=question, principal_id="bench", allowed_scopes=scopes,
                namespace="bench", max_tokens=1500, timeout_ms=10_000)
            t=time.perf_counter(); resp = await provider.aretrieve(req); e=(time.perf_counter()-t)*1000
            if n < 5: continue
            lat.append(e)
            for s in resp.manifest.stages: st.setdefault(s.stage, []).append(s.elapsed_ms)
        return statistics.median(lat), {k: statistics.median(v) for k,v in st.items()}
    store_mod.top_k_visible = recording; await run()
    ratios=[]
    for r in range(rounds):
        store_mod.top_k_visible = recording; scan_ms.clear()
        a, sa = await run()
        store_mod.top_k_visible = oracle
        b, sb = await run()
        ratios.append(b/a)
        print(f"round {r}: real p50 {a:.2f} (scan p50 {statistics.median(scan_ms):.2f}, vec {sa['candidates.vector']}, ft {sa['candidates.fulltext']}) oracle p50 {b:.2f} (vec {sb['candidates.vector']}, ft {sb['candidates.fulltext']}) ratio {b/a:.3f}", os.getloadavg()[0], flush=True)
    print("ratio min/med/max", min(ratios), statistics.median(ratios), max(ratios))
    await store.close()
asyncio.run(main(int(sys.argv[1])))
