"""First full-text and vector search after a delete, at 100k: the caches' refresh."""
import asyncio, sqlite3, sys, time, json
from pathlib import Path
import numpy as np
from graphctx.store.sqlite.store import SqliteGraphStore

path, round_ = Path(sys.argv[1]), int(sys.argv[2])
conn = sqlite3.connect(path)
ns = conn.execute("SELECT namespace FROM namespaces").fetchone()[0]
doc_ids = [r[0] for r in conn.execute("SELECT document_id FROM documents WHERE namespace=? AND is_latest=1 ORDER BY id LIMIT 50", (ns,))]
scopes = frozenset(r[0] for r in conn.execute("SELECT DISTINCT scope FROM document_scopes"))
blob = conn.execute("SELECT embedding FROM chunks LIMIT 1").fetchone()[0]
conn.close()
vec = np.frombuffer(blob, dtype=np.float32).copy()

async def main() -> None:
    store = SqliteGraphStore(path)
    await store.open()
    far = lambda: time.monotonic() + 120
    await store.fulltext_search(ns, "payment policy", scopes, 50, far())
    await store.vector_search(ns, vec, scopes, 50, far())
    out = []
    for doc in doc_ids[round_ * 3 : round_ * 3 + 3]:
        await store.delete_document(ns, doc)
        t = time.perf_counter(); await store.fulltext_search(ns, "payment policy", scopes, 50, far()); ft = time.perf_counter() - t
        t = time.perf_counter(); await store.vector_search(ns, vec, scopes, 50, far()); vs = time.perf_counter() - t
        out.append((ft, vs))
    await store.close()
    print(json.dumps({"fulltext_ms": [round(a * 1000) for a, _ in out], "vector_ms": [round(b * 1000) for _, b in out]}))

asyncio.run(main())
