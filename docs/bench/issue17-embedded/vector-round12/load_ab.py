"""Time one full load of the 100k matrix (VectorCache.matrix_for) in this tree."""
import sqlite3, time, resource
from pathlib import Path
from graphctx.store.sqlite.vectors import VectorCache
path = next(Path("/tmp/s100k").glob("store-100000-*.sqlite"))
conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
gen = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
t = time.perf_counter(); cpu = time.process_time()
data = VectorCache().matrix_for(conn, "bench", gen)
print(f"load wall {time.perf_counter()-t:.2f} s cpu {time.process_time()-cpu:.2f} s peak rss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MB")
