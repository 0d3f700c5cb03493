"""The full-text search's SQL statements alone, by kind: wall ms per request (sum), count,
over the bench's 105 requests (run inline on one thread, nothing beside it).

Usage: fulltext_sql.py STORE
"""
import asyncio, random, re, sqlite3, statistics, sys, time
from collections import defaultdict
from pathlib import Path

from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, WARM_UP, load_passages, query_plan

per = defaultdict(lambda: defaultdict(float))
cnt = defaultdict(int)


class Conn:
    def __init__(self, conn):
        self._c = conn

    def execute(self, sql, *a):
        kind = re.sub(r"chunk_fts_\d+", "T", " ".join(sql.split()))[:70]
        t = time.perf_counter()
        rows = self._c.execute(sql, *a).fetchall()
        per[self.n][kind] += (time.perf_counter() - t) * 1000
        cnt[kind] += 1
        return Cur(rows)

    def __getattr__(self, k):
        return getattr(self._c, k)


class Cur:
    def __init__(self, rows):
        self.rows = rows

    def fetchall(self):
        return self.rows

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def __iter__(self):
        return iter(self.rows)


async def run(path):
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(path))
    await store.open()

    async def inline(self, work, deadline):
        return work(wrapped)

    SqliteGraphStore._read = inline
    wrapped = Conn(store._reader())
    totals = []
    for n, (q, s) in enumerate(plan):
        wrapped.n = n
        t = time.perf_counter()
        await store.fulltext_search(BENCH_NAMESPACE, q, frozenset(s), 50, time.monotonic() + 10)
        totals.append((time.perf_counter() - t) * 1000)
    kinds = sorted(cnt, key=lambda k: -sum(per[n][k] for n in per if n >= WARM_UP))
    print("total p50 %.2f mean %.2f" % (statistics.median(totals[WARM_UP:]), statistics.mean(totals[WARM_UP:])))
    for k in kinds:
        v = [per[n].get(k, 0.0) for n in range(WARM_UP, len(plan))]
        print(f"mean {statistics.mean(v):6.3f} ms  calls/req {cnt[k]/len(plan):5.1f}  {k}")

asyncio.run(run(sys.argv[1]))
