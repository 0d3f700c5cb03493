"""Wall-clock segments of each request: wraps the provider's steps (sync and async)."""
from __future__ import annotations
import asyncio, inspect, json, random, statistics, sys, time
from pathlib import Path
import graphctx.provider as P
import graphctx.retrieve.bundle as B
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan, WARM_UP

SEG: dict[str, float] = {}

def wrap(mod, name, label=None):
    f = getattr(mod, name); label = label or name
    if inspect.iscoroutinefunction(f):
        async def w(*a, **k):
            t = time.perf_counter()
            try: return await f(*a, **k)
            finally: SEG[label] = SEG.get(label, 0) + (time.perf_counter() - t) * 1000
    else:
        def w(*a, **k):
            t = time.perf_counter()
            try: return f(*a, **k)
            finally: SEG[label] = SEG.get(label, 0) + (time.perf_counter() - t) * 1000
    setattr(mod, name, w)

for n in ["effective_scopes", "classify_question", "plan_route", "gather_candidates", "fuse_lists",
          "rank_with_graph", "finish_bundle", "assemble_response"]:
    wrap(P, n)
for n in ["rank_fresh", "assess_relevance", "pack_and_gate", "pack_to_budget", "verify_visible"]:
    wrap(B, n)
import graphctx.retrieve.assemble as A
wrap(A, "log_manifest"); wrap(A, "build_manifest"); wrap(A, "_manifest"); wrap(A, "_item")
C = P.ContextProvider
for n in ["_lookup_entities", "_verify_embedder", "_fetch", "_search"]:
    wrap(C, n)
import graphctx.retrieve.candidates as CA
wrap(CA.asyncio, "to_thread", "embed_to_thread") if False else None

async def main():
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(sys.argv[1])); await store.open()
    wrap(type(store), "search_candidates", "store.search_candidates")
    wrap(type(store), "fetch_chunks", "store.fetch_chunks")
    wrap(type(store), "lookup_entities", "store.lookup_entities")
    provider = P.ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    rows = []
    for n, (q, scopes) in enumerate(plan):
        req = ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes, namespace=BENCH_NAMESPACE, max_tokens=1500, timeout_ms=10_000)
        SEG.clear()
        t = time.perf_counter(); r = await provider.aretrieve(req); total = (time.perf_counter() - t) * 1000
        if n < WARM_UP: continue
        row = dict(SEG); row["total"] = total
        for s in r.manifest.stages: row["stage:" + s.stage] = s.elapsed_ms
        rows.append(row)
    keys = sorted({k for r in rows for k in r})
    for k in keys:
        v = [r.get(k, 0.0) for r in rows]
        print(f"{k:40s} p50 {statistics.median(v):7.2f}  mean {statistics.mean(v):7.2f}")
    Path(sys.argv[2]).write_text(json.dumps(rows))
asyncio.run(main())
