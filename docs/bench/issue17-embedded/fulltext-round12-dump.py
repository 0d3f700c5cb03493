"""Dump the full-text hits of the bench's queries (and 2,000 more) with their own scopes and
with all scopes, at three limits: python fulltext-round12-dump.py STORE_DIR OUT.json"""
import asyncio, glob, json, random, sys
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline

EVERY = [f"s{i}" for i in range(B.SCOPE_COUNT)]

async def main(folder: str, out: str) -> None:
    path = Path(glob.glob(f"{folder}/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    plan += B.query_plan(questions, 2000, random.Random(17))
    store = SqliteGraphStore(path)
    await store.open()
    rows = []
    for question, scopes in plan:
        for chosen in (sorted(scopes), EVERY):
            for limit in (10, 50, 200):
                hits = await store.fulltext_search(
                    B.BENCH_NAMESPACE, question, frozenset(chosen), limit, far_deadline()
                )
                rows.append([question, chosen, limit, [[h.chunk_id, h.score] for h in hits]])
    await store.close()
    Path(out).write_text(json.dumps(rows))
    print(len(rows), "searches", sum(1 for r in rows if r[3]), "with hits",
          sum(len(r[3]) for r in rows), "hits")

asyncio.run(main(sys.argv[1], sys.argv[2]))
