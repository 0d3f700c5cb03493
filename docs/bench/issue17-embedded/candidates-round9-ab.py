"""Base vs new full-text ranking in one process, alternated query by query (ABBA).

usage: candidates-round9-ab.py BASE_TREE STORE_DIR ROUNDS
The base tree's namespace_stats and visible_bm25 modules are loaded from BASE_TREE under
other names; each leg of a query swaps the store's counts cache and fulltext.rank_visible,
so both legs run the same store, connection, embedder and query at nearly the same time.
Prints per leg the candidate stage (gather_candidates: wall, per-list elapsed_ms) and the
full-text search alone (thread CPU and wall).
"""
import asyncio, glob, importlib.util, json, random, statistics, sys, time
from pathlib import Path
from graphctx_lab.bench import store as B
from graphctx.contract import RetrieverName as RN
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.retrieve.candidates import gather_candidates
from graphctx.store.sqlite import fulltext as F
from graphctx.store.sqlite import namespace_stats, visible_bm25
from graphctx.store.sqlite.store import SqliteGraphStore, _generation
from graphctx.text.lexical import query_terms


def load(tree: str, name: str, relative: str):
    spec = importlib.util.spec_from_file_location(name, f"{tree}/src/graphctx/store/sqlite/{relative}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


async def main(base_tree: str, folder: str, rounds: int) -> None:
    base_ns = load(base_tree, "base_namespace_stats", "namespace_stats.py")
    base_vb = load(base_tree, "base_visible_bm25", "visible_bm25.py")
    path = Path(glob.glob(f"{folder}/store-100000-*.sqlite")[0])
    _, questions = B.load_passages(Path("/work/shared/data"))
    plan = B.query_plan(questions, 100, random.Random(B.SEED + 100000))
    store = SqliteGraphStore(path)
    await store.open()
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.open()
    legs = {"base": (base_ns.StatsCache(), base_vb.rank_visible), "new": (namespace_stats.StatsCache(), visible_bm25.rank_visible)}
    results = {leg: {"gather": [], "fulltext": [], "vector": [], "search_cpu": [], "search_wall": []} for leg in legs}
    ns = B.BENCH_NAMESPACE
    conn = store._reader()

    def use(leg: str) -> None:
        store._stats, F.rank_visible = legs[leg]

    for n, (question, scopes) in enumerate(plan * rounds):
        order = ["base", "new"] if n % 2 == 0 else ["new", "base"]
        for leg in order:
            use(leg)
            started = time.perf_counter()
            found = await gather_candidates(store, embedder, ns, question, frozenset(scopes), [RN.FULLTEXT, RN.VECTOR], time.monotonic() + 10)
            wall = (time.perf_counter() - started) * 1000
            stats = store._stats.stats_for(conn, ns, _generation(conn))
            terms = query_terms(question)
            cpu, started = time.thread_time(), time.perf_counter()
            F.search(conn, stats, ns, terms, frozenset(scopes), 50)
            search_wall, cpu = (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000
            if n % len(plan) < B.WARM_UP:
                continue
            r = results[leg]
            r["gather"].append(wall)
            r["search_cpu"].append(cpu)
            r["search_wall"].append(search_wall)
            for report in found.reports:
                r[report.stage.split(".")[1]].append(report.elapsed_ms)
    summary = {
        leg: {k: {"p50": round(statistics.median(v), 2), "p95": round(statistics.quantiles(v, n=20)[-1], 2), "n": len(v)} for k, v in r.items()}
        for leg, r in results.items()
    }
    summary["new/base p50"] = {k: round(summary["new"][k]["p50"] / summary["base"][k]["p50"], 3) for k in results["new"]}
    print(json.dumps(summary, indent=1))
    await store.close()


asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
