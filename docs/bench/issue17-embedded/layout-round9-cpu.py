import sqlite3, time, sys
from graphctx.store.sqlite.scope_layout import ScopeLayout
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
ns = conn.execute("SELECT namespace FROM namespaces").fetchone()[0]
ts = []
for _ in range(int(sys.argv[2])):
    conn.execute("BEGIN"); t = time.process_time(); ScopeLayout(conn, ns, -1); ts.append(time.process_time() - t); conn.execute("COMMIT")
ts.sort(); print(f"{sys.argv[3]} layout cpu min {ts[0]*1000:.0f} median {ts[len(ts)//2]*1000:.0f} ms")
