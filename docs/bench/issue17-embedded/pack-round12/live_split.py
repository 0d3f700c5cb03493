"""The bench's 100 requests (after warm-up) on the 100k store, pack+gate and the response
assembly split by perf_counter wrappers: pack_to_budget, the output gate's re-read, the rest."""
import asyncio, collections, random, statistics, sys, time
from pathlib import Path
import graphctx.retrieve.bundle as B
import graphctx.provider as PR
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan

T = collections.defaultdict(list)
cur = collections.Counter()
def wrap_sync(owner, name, label):
    f = getattr(owner, name)
    def w(*a, **k):
        t = time.perf_counter()
        try: return f(*a, **k)
        finally: cur[label] += time.perf_counter() - t
    setattr(owner, name, w)
def wrap_async(owner, name, label):
    f = getattr(owner, name)
    async def w(*a, **k):
        t = time.perf_counter()
        try: return await f(*a, **k)
        finally: cur[label] += time.perf_counter() - t
    setattr(owner, name, w)
wrap_sync(B, "pack_to_budget", "pack_to_budget")
wrap_async(B, "verify_visible", "output gate re-read")
wrap_async(B, "pack_and_gate", "pack+gate (whole)")
for name in dir(PR):
    if name == "assemble_response":
        wrap_sync(PR, name, "assemble_response")

async def main():
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(sys.argv[1])); await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
    for rnd in range(2):
        for q, scopes in plan:
            cur.clear()
            t = time.perf_counter()
            r = await provider.aretrieve(ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes, namespace=BENCH_NAMESPACE, max_tokens=budget, timeout_ms=10_000))
            cur["request"] += time.perf_counter() - t
            if rnd == 1:
                for k, v in cur.items(): T[k].append(v * 1000)
    await store.close()
    for k, v in sorted(T.items()):
        print(f"{k:24s} n={len(v):3d} p50 {statistics.median(v):7.3f}  mean {statistics.fmean(v):7.3f} ms")
asyncio.run(main())
