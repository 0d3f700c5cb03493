import asyncio, random, time, glob, statistics, threading, sys
from collections import defaultdict
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore
import graphctx.store.sqlite.store as S
import graphctx.store.sqlite.fulltext as F
import graphctx.store.sqlite.visible_bm25 as V
import graphctx.store.sqlite.vector_scan as VS
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.context.tokens import default_token_counter
from graphctx.contract import ContextRequest
import graphctx.retrieve.candidates as RC
EV = []
def wrap(mod, name, label):
    f = getattr(mod, name)
    def w(*a, **k):
        t = time.perf_counter(); r = f(*a, **k); EV.append((label, threading.get_ident(), t, time.perf_counter())); return r
    setattr(mod, name, w)
wrap(F, "search", "ft.search")
wrap(V, "rank_visible", "ft.rank_visible")
wrap(VS, "top_k_visible", "vec.topk")
S.top_k_visible = VS.top_k_visible
wrap(S, "_chunk_ids", "vec.chunk_ids")
emb = UniversalSentenceEncoderEmbedder()
oe = emb.embed_query
def eq(text):
    t = time.perf_counter(); r = oe(text); EV.append(("embed", threading.get_ident(), t, time.perf_counter())); return r
emb.embed_query = eq
og = RC.gather_candidates
async def gc(*a, **k):
    t = time.perf_counter(); r = await og(*a, **k); EV.append(("gather", threading.get_ident(), t, time.perf_counter())); return r
import graphctx.provider as P
P.gather_candidates = gc
# to_thread dispatch: wrap SqliteGraphStore._read work
orr = SqliteGraphStore._read
async def rd(self, work, deadline):
    def w2(conn):
        t = time.perf_counter(); r = work(conn); EV.append(("read:" + getattr(work, "__qualname__", "?").split(".")[-2], threading.get_ident(), t, time.perf_counter())); return r
    return await orr(self, w2, deadline)
SqliteGraphStore._read = rd
async def main():
    from graphctx.retrieve.authorize import CallerAssertedGrants
    path = Path(glob.glob(sys.argv[1] + "/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path); await store.open()
    provider = ContextProvider(store, emb, default_token_counter(), CallerAssertedGrants())
    per = defaultdict(list)
    for n, (q, s) in enumerate(plan):
        EV.clear()
        req = ContextRequest(query=q, principal_id="bench", allowed_scopes=s, namespace=B.BENCH_NAMESPACE, max_tokens=1500, timeout_ms=10000)
        t0 = time.perf_counter()
        resp = await provider.aretrieve(req)
        total = time.perf_counter() - t0
        if n < 5: continue
        g = [e for e in EV if e[0] == "gather"][0]
        base = g[2]
        per["request"].append(total*1000)
        for lab, tid, a, b in EV:
            if a >= base - 1e-6 and b <= g[3] + 1e-6:
                per[lab + ".start"].append((a - base)*1000); per[lab + ".end"].append((b - base)*1000); per[lab + ".dur"].append((b-a)*1000)
        d = {lab: (a, b) for lab, tid, a, b in EV}
        if "embed" in d and "vec.topk" in d:
            per["gap embed.end->vec.topk.start"].append((d["vec.topk"][0] - d["embed"][1])*1000)
            per["gap gather.start->embed.start"].append((d["embed"][0] - base)*1000)
            per["gap vec.ids.end->gather.end"].append((g[3] - d["vec.chunk_ids"][1])*1000)
            per["gap ft.end->gather.end"].append((g[3] - d["ft.search"][1])*1000)
        for st in resp.manifest.stages:
            per["stage " + st.stage].append(st.elapsed_ms)
        if n < 8:
            print([(lab, tid % 1000, round((a-base)*1000,2), round((b-base)*1000,2)) for lab, tid, a, b in EV if a >= base-1e-6 and b <= g[3]+1e-6])
    for k in sorted(per):
        v = per[k]; print(f"{k:34s} p50 {statistics.median(v):7.2f} p95 {statistics.quantiles(v, n=20)[-1]:7.2f} n={len(v)}")
    await store.close()
asyncio.run(main())
