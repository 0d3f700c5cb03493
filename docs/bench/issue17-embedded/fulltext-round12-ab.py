"""Base vs new full-text search alone, in one process, alternated query by query (ABBA).

usage: fulltext-round12-ab.py BASE_TREE STORE_DIR ROUNDS [all]
The base tree's visible_bm25 is loaded under another name; each leg swaps
fulltext.rank_visible, so both legs run the same store, connection, counts and query at
nearly the same time (the bench's 95 timed queries, limit 50, their own scopes or, with
"all", every scope). Per round: p50 of each leg's thread CPU and wall, the new/base ratio,
and the rows each leg read (stored-terms rows).
"""
import asyncio, glob, importlib.util, random, statistics, sys, time
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.store.sqlite import fulltext as F
from graphctx.store.sqlite import visible_bm25
from graphctx.store.sqlite.store import SqliteGraphStore, _generation
from graphctx.text.lexical import query_terms


def load(tree: str, name: str, relative: str):
    spec = importlib.util.spec_from_file_location(name, f"{tree}/src/graphctx/store/sqlite/{relative}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def counting(module):
    read = module._Pool.read
    module.rows = 0
    def wrapped(self, picked):
        module.rows += len(picked)
        return read(self, picked)
    module._Pool.read = wrapped


async def main(base_tree: str, folder: str, rounds: int, every: bool) -> None:
    base = load(base_tree, "base_visible_bm25", "visible_bm25.py")
    legs = {"base": base, "new": visible_bm25}
    for module in legs.values():
        counting(module)
    path = Path(glob.glob(f"{folder}/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path)
    await store.open()
    conn = store._reader()
    ns = B.BENCH_NAMESPACE
    stats = store._stats.stats_for(conn, ns, _generation(conn))
    for round_ in range(rounds):
        got = {leg: {"cpu": [], "wall": [], "rows": []} for leg in legs}
        for n, (question, scopes) in enumerate(plan):
            if every:
                scopes = [f"s{i}" for i in range(B.SCOPE_COUNT)]
            terms = query_terms(question)
            order = ["base", "new"] if (n + round_) % 2 == 0 else ["new", "base"]
            answers = {}
            for leg in order:
                module = legs[leg]
                F.rank_visible = module.rank_visible
                module.rows = 0
                cpu, started = time.thread_time(), time.perf_counter()
                answers[leg] = F.search(conn, stats, ns, terms, frozenset(scopes), 50)
                wall, cpu = (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000
                if n >= B.WARM_UP:
                    got[leg]["cpu"].append(cpu); got[leg]["wall"].append(wall); got[leg]["rows"].append(module.rows)
            assert answers["base"] == answers["new"], question
        p = {leg: {k: statistics.median(v) for k, v in got[leg].items()} for leg in legs}
        print(f"round {round_ + 1}: cpu {p['base']['cpu']:.2f} -> {p['new']['cpu']:.2f} ({p['new']['cpu'] / p['base']['cpu']:.3f})"
              f"  wall {p['base']['wall']:.2f} -> {p['new']['wall']:.2f} ({p['new']['wall'] / p['base']['wall']:.3f})"
              f"  rows p50 {p['base']['rows']:.0f} -> {p['new']['rows']:.0f}", flush=True)
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4 and sys.argv[4] == "all"))
