"""Dump both candidate lists of the bench's queries (and 2,000 more) at three limits.

usage: candidates-round9-dump.py STORE_DIR VECTORS.npy OUT.json
The query vectors are embedded once into VECTORS.npy (first run) and read back by every
later run, so two trees' dumps differ only by their searches.
"""
import asyncio, glob, json, random, sys, time
from pathlib import Path
import numpy as np
from graphctx_lab.bench import store as B
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline

async def main(folder: str, vectors: str, out: str) -> None:
    path = Path(glob.glob(f"{folder}/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    plan += B.query_plan(questions, 2000, random.Random(17))
    if not Path(vectors).exists():
        embedder = UniversalSentenceEncoderEmbedder()
        np.save(vectors, np.stack([embedder.embed_query(q) for q, _ in plan]))
    matrix = np.load(vectors)
    store = SqliteGraphStore(path)
    await store.open()
    rows = []
    t = time.perf_counter()
    for (question, scopes), vector in zip(plan, matrix, strict=True):
        for limit in (10, 50, 200):
            ft = await store.fulltext_search(B.BENCH_NAMESPACE, question, frozenset(scopes), limit, far_deadline())
            vec = await store.vector_search(B.BENCH_NAMESPACE, vector, frozenset(scopes), limit, far_deadline())
            rows.append([question, sorted(scopes), limit, [[h.chunk_id, h.score] for h in ft], [[h.chunk_id, h.score] for h in vec]])
    await store.close()
    Path(out).write_text(json.dumps(rows))
    print(len(rows), "searches,", sum(len(r[3]) for r in rows), "full-text hits,",
          sum(len(r[4]) for r in rows), "vector hits,", round(time.perf_counter() - t, 1), "s")

asyncio.run(main(*sys.argv[1:4]))
