"""Vector stage alone, base vs new, alternated rounds, on /tmp/s100k (read-only), the bench's
105 queries and scopes (plus every query over all 10 scopes); checks identical results."""
import importlib.util, json, os, sqlite3, statistics, sys, threading, time
from pathlib import Path
import numpy as np
from threadpoolctl import threadpool_limits
from graphctx.store.sqlite.vectors import VectorCache
from graphctx.store.sqlite import vector_scan as new_scan, vector_codes

spec = importlib.util.spec_from_file_location("base_scan", "/tmp/h-vec8-base/src/graphctx/store/sqlite/vector_scan.py")
base_scan = importlib.util.module_from_spec(spec); spec.loader.exec_module(base_scan)
threadpool_limits(1, "blas")  # as in the bench: the embedder fixes one BLAS thread
assert vector_codes.KERNEL is not None
path = next(Path("/tmp/s100k").glob("store-100000-*.sqlite"))
conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
gen = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
t = time.perf_counter(); data = VectorCache().matrix_for(conn, "bench", gen)
print("load s", round(time.perf_counter() - t, 2))
q = np.load("/tmp/h-vec8/qvecs.npy")
plan = json.loads(Path("/tmp/h-vec8/plan.json").read_text())
every = frozenset(f"s{i}" for i in range(10))
cases = [(q[i], frozenset(s)) for i, (_, s) in enumerate(plan)][5:]
mode = sys.argv[1] if len(sys.argv) > 1 else "bench"
if mode == "all": cases = [(v, every) for v, _ in cases]
same = all(base_scan.top_k_visible(data, v, s, 50) == new_scan.top_k_visible(data, v, s, 50) for v, s in cases)
same_all = all(base_scan.top_k_visible(data, v, every, 50) == new_scan.top_k_visible(data, v, every, 50) for v, _ in cases)
print("identical (bench scopes):", same, " (all scopes):", same_all)
stop = threading.Event()
def busy():  # the concurrent full-text stage's stand-in: a thread running FTS5 queries
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True); n = 0
    words = ["law", "river", "city", "born", "film", "state", "war", "music"]
    while not stop.is_set():
        c.execute("SELECT rowid FROM chunk_fts_1 WHERE chunk_fts_1 MATCH ? ORDER BY rank LIMIT 50", (words[n % 8],)).fetchall(); n += 1
if "busy" in sys.argv[2:]:
    threading.Thread(target=busy, daemon=True).start()
def run(fn):
    ts = []; cpu = time.thread_time()
    for v, s in cases:
        t = time.perf_counter(); fn(data, v, s, 50); ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts), (time.thread_time() - cpu) * 1000 / len(cases)
ratios = []; rows = []
for r in range(int(os.environ.get("ROUNDS", 6))):
    a, ac = run(base_scan.top_k_visible); b, bc = run(new_scan.top_k_visible)
    ratios.append(b / a); rows.append((a, b, ac, bc))
    print(f"round {r}: base p50 {a:.2f} ms (cpu {ac:.2f}) new p50 {b:.2f} ms (cpu {bc:.2f}) ratio {b/a:.3f} load {os.getloadavg()[0]:.2f}", flush=True)
print(f"{mode} {sys.argv[2:]}: ratio min {min(ratios):.3f} median {statistics.median(ratios):.3f} max {max(ratios):.3f}")
stop.set()
