"""Whole request, base vs new vector scan in one process on one store (/tmp/s100k), swapped
request by request (order alternating), so machine load hits both alike. The bench's 105
requests per round (first 5 warm-up, not timed)."""
import asyncio, importlib.util, json, os, statistics, sys, time
from pathlib import Path
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite import store as store_mod, vector_codes
from graphctx.store.sqlite.store import SqliteGraphStore

spec = importlib.util.spec_from_file_location("base_scan", "/tmp/h-vec8-base/src/graphctx/store/sqlite/vector_scan.py")
base_scan = importlib.util.module_from_spec(spec); spec.loader.exec_module(base_scan)
new_top_k = store_mod.top_k_visible
assert vector_codes.KERNEL is not None
plan = json.loads(Path("/tmp/h-vec8/plan.json").read_text())

async def main(rounds: int) -> None:
    path = next(Path("/tmp/s100k").glob("store-100000-*.sqlite"))
    store = SqliteGraphStore(path); await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    async def one(question, scopes, scan):
        store_mod.top_k_visible = scan
        req = ContextRequest(query=question, principal_id="bench", allowed_scopes=scopes,
                             namespace="bench", max_tokens=1500, timeout_ms=10_000)
        t = time.perf_counter(); resp = await provider.aretrieve(req)
        e = (time.perf_counter() - t) * 1000
        vec = next(s.elapsed_ms for s in resp.manifest.stages if s.stage == "candidates.vector")
        ft = next(s.elapsed_ms for s in resp.manifest.stages if s.stage == "candidates.fulltext")
        return e, vec, ft
    ratios = {"p50": [], "p95": [], "vector": [], "fulltext": []}
    for r in range(rounds):
        out = {"base": [], "new": []}
        for n, (q, s) in enumerate(plan):
            sides = [("base", base_scan.top_k_visible), ("new", new_top_k)]
            if (n + r) % 2: sides.reverse()
            for name, scan in sides:
                res = await one(q, s, scan)
                if n >= 5: out[name].append(res)
        def pct(v, p): return statistics.quantiles(v, n=100, method="inclusive")[p - 1]
        b = [x[0] for x in out["base"]]; w = [x[0] for x in out["new"]]
        bv = statistics.median(x[1] for x in out["base"]); wv = statistics.median(x[1] for x in out["new"])
        bf = statistics.median(x[2] for x in out["base"]); wf = statistics.median(x[2] for x in out["new"])
        ratios["p50"].append(pct(w, 50) / pct(b, 50)); ratios["p95"].append(pct(w, 95) / pct(b, 95))
        ratios["vector"].append(wv / bv); ratios["fulltext"].append(wf / bf)
        print(f"round {r}: base p50 {pct(b,50):.2f} p95 {pct(b,95):.2f} (vector {bv}, fulltext {bf}) | new p50 {pct(w,50):.2f} p95 {pct(w,95):.2f} (vector {wv}, fulltext {wf}) | p50 ratio {pct(w,50)/pct(b,50):.3f} | load {os.getloadavg()[0]:.2f}", flush=True)
    for k, v in ratios.items():
        print(f"{k} new/base: min {min(v):.3f} median {statistics.median(v):.3f} max {max(v):.3f}")
    await store.close()
asyncio.run(main(int(sys.argv[1])))
