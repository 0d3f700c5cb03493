"""Timeline profile of one end-to-end ingest (embedded store), per thread."""
import asyncio, sys, tempfile, threading, time, json
from collections import defaultdict
from pathlib import Path
from graphctx.embed import UniversalSentenceEncoderEmbedder
import graphctx.ingest.batching as batching
import graphctx.embed.usem3_forward as fwd
import graphctx.embed.universal_sentence_encoder as use_mod
import graphctx.ingest.pipeline as pipeline
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.store.sqlite.store import SqliteGraphStore
import graphctx.store.sqlite.store as store_mod
from graphctx_lab.bench.ingest import bench_sources, ROOT

events = []  # (thread, label, t0, t1, cpu)
def wrap(mod, name, label):
    f = getattr(mod, name)
    def w(*a, **k):
        t0 = time.perf_counter(); c0 = time.thread_time()
        try:
            return f(*a, **k)
        finally:
            events.append((threading.current_thread().name, label, t0, time.perf_counter(), time.thread_time() - c0))
    setattr(mod, name, w)

wrap(batching, "chunk_document", "chunk")
wrap(batching, "embed_each", "embed_each")
wrap(use_mod, "encode_each", "encode_each(BLAS)")
wrap(pipeline, "embed_sources", "task")
wrap(store_mod, "write_document_versions", "sqlite write work")
wrap(store_mod, "latest_stored_version", "latest_version")
wrap(pipeline, "build_document", "build_document")
mode = sys.argv[1] if len(sys.argv) > 1 else "e2e"
data = Path("/work/shared/data")
sources = bench_sources(data, 1000)
emb = UniversalSentenceEncoderEmbedder(); emb.open()
# tokenizer: wrap backend.sp.encode
backend = emb._loaded_model()._model
sp = backend.sp
orig = sp.encode
tok = defaultdict(float); tokcpu = defaultdict(float)
class SP:
    def __getattr__(self, n): return getattr(sp, n)
    def encode(self, *a, **k):
        t0 = time.perf_counter(); c0 = time.thread_time()
        r = orig(*a, **k)
        n = threading.current_thread().name
        tok[n] += time.perf_counter() - t0; tokcpu[n] += time.thread_time() - c0
        return r
backend.sp = SP()
emb.embed_each([["warm"]])
async def main():
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteGraphStore(Path(tmp) / "s.sqlite"); await store.open()
        # warm namespace
        await ingest_sources(store, emb, sources[:20], ROOT, IngestDefaults(namespace="warm", source_uri_prefix="bench://"))
        events.clear(); tok.clear(); tokcpu.clear()
        c0 = time.process_time(); t0 = time.perf_counter()
        r = await ingest_sources(store, emb, sources, ROOT, IngestDefaults(namespace="bench", source_uri_prefix="bench://"))
        wall = time.perf_counter() - t0; cpu = time.process_time() - c0
        await store.close()
        return r, wall, cpu, t0
r, wall, cpu, T0 = asyncio.run(main())
print(f"chunks {r.chunks_written} wall {wall:.2f}s process cpu {cpu:.2f}s ({cpu/wall:.2f} cores) -> {r.chunks_written/wall:.1f} chunks/s")
agg = defaultdict(lambda: [0, 0.0, 0.0])
for th, label, a, b, c in events:
    key = (th.split("_")[0] if th.startswith("graphctx-embed") else th, label)
    agg[key][0] += 1; agg[key][1] += b - a; agg[key][2] += c
for (th, label), (n, w, c) in sorted(agg.items()):
    print(f"{th:28s} {label:22s} n={n:5d} wall {w:6.2f}s cpu {c:6.2f}s")
for n in tok: print(f"tokenize {n:28s} wall {tok[n]:.2f}s cpu {tokcpu[n]:.2f}")
# busy: union of worker task intervals
tasks = sorted((a, b) for th, l, a, b, c in events if l == "task")
print("tasks", len(tasks), "first start", round(tasks[0][0]-T0, 3), "last end", round(max(b for a,b in tasks)-T0,3))
# concurrency over time: fraction of wall with 0/1/2 tasks running
pts = sorted([(a, 1) for a, b in tasks] + [(b, -1) for a, b in tasks])
cur = 0; last = T0; hist = defaultdict(float)
for t, d in pts:
    hist[cur] += t - last; last = t; cur += d
hist[cur] += T0 + wall - last
print("tasks running: " + ", ".join(f"{k}: {v:.2f}s" for k, v in sorted(hist.items())))
byw = defaultdict(list)
for th, l, a, b, c in events:
    if l == "task": byw[th].append((a - T0, b - T0))
for th, iv in sorted(byw.items()):
    iv.sort(); gaps = [(round(iv[i][0] - iv[i-1][1], 3), round(iv[i-1][1], 2)) for i in range(1, len(iv)) if iv[i][0] - iv[i-1][1] > 0.005]
    print(th, "first", round(iv[0][0], 3), "last end", round(iv[-1][1], 3), "gaps>5ms", gaps)
ws = sorted((a - T0, b - T0) for th, l, a, b, c in events if l == "sqlite write work")
print("writes", [(round(a, 2), round(b - a, 3)) for a, b in ws])
print("wall", round(wall, 3))
if len(sys.argv) > 2: sys.exit()
# embedder alone, same tasks, CPU
from graphctx_lab.bench.ingest import _chunked, _tasks
from concurrent.futures import ThreadPoolExecutor
docs = _chunked(sources)
tasks = _tasks(docs, batching.EMBED_CHARS)
flat = [[t for d in task for t in d] for task in tasks]
for label, fn, items in (("embed_documents flat", emb.embed_documents, flat), ("embed_each per task", emb.embed_each, tasks)):
    tok.clear()
    c0 = time.process_time(); t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as pool: list(pool.map(fn, items))
    w = time.perf_counter() - t0; c = time.process_time() - c0
    print(f"{label}: wall {w:.2f} cpu {c:.2f} ({c/w:.2f} cores) {r.chunks_written/w:.1f} chunks/s; tokenize wall {sum(tok.values()):.2f}")
