"""The bench's 105 requests on a 100k store copy at one budget: pack+gate per request (wall and
event-loop-thread CPU of pack_and_gate, CPU of pack_to_budget inside it), the manifest's
pack+gate stage and the request's wall time; the first 5 requests untimed."""
import asyncio, json, random, statistics, sys, time
from pathlib import Path
import graphctx
import graphctx.retrieve.bundle as B
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, WARM_UP, load_passages, query_plan

REC = {"pack_cpu": [], "gate_wall": [], "gate_cpu": []}
orig_pack, orig_pg = B.pack_to_budget, B.pack_and_gate
def pack(*a, **k):
    c = time.thread_time(); r = orig_pack(*a, **k); REC["pack_cpu"].append((time.thread_time() - c) * 1000); return r
async def pg(*a, **k):
    t, c = time.perf_counter(), time.thread_time()
    r = await orig_pg(*a, **k)
    REC["gate_wall"].append((time.perf_counter() - t) * 1000); REC["gate_cpu"].append((time.thread_time() - c) * 1000)
    return r
B.pack_to_budget, B.pack_and_gate = pack, pg

async def main():
    store_path, tokens, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(store_path)); await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    for q, scopes in plan[:WARM_UP]:
        await provider.aretrieve(ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes, namespace=BENCH_NAMESPACE, max_tokens=1500, timeout_ms=10_000))
    for v in REC.values(): v.clear()
    stage, total = [], []
    for q, scopes in plan[WARM_UP:]:
        t = time.perf_counter()
        r = await provider.aretrieve(ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes, namespace=BENCH_NAMESPACE, max_tokens=tokens, timeout_ms=10_000))
        total.append((time.perf_counter() - t) * 1000)
        stage += [float(s.elapsed_ms) for s in r.manifest.stages if s.stage == "pack+gate"]
    await store.close()
    med = lambda v: round(statistics.median(v), 3)
    res = {"tree": graphctx.__file__, "tokens": tokens, "requests": len(total), "pack_cpu_p50": med(REC["pack_cpu"]),
           "pack_gate_wall_p50": med(REC["gate_wall"]), "pack_gate_cpu_p50": med(REC["gate_cpu"]),
           "stage_pack_gate_p50": med(stage), "request_p50": med(total)}
    print(json.dumps(res)); Path(out).write_text(json.dumps(res))
asyncio.run(main())
