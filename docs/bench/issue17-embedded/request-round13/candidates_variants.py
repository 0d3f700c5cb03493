"""The candidate stage (gather_candidates) of the bench's 105 requests, run several ways,
interleaved query by query: wall ms of the stage and of each list's work.

Usage: candidates_variants.py STORE [rounds]
Variants: gather (the tree's), serial-ft-first, serial-vec-first, gather with a 0.5 ms GIL
switch interval.
"""
import asyncio, random, statistics, sys, time
from pathlib import Path

import graphctx.store.sqlite.store as store_mod
from graphctx.contract import RetrieverName
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.retrieve.authorize import CallerAssertedGrants, effective_scopes
from graphctx.retrieve.candidates import gather_candidates
from graphctx.store.candidate_lists import CandidateSearch
from graphctx.store.candidate_search import compose_candidate_search, outcome_of
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, WARM_UP, load_passages, query_plan


async def serial(store, namespace, query, query_vector, scopes, limit, deadline, ft_first):
    async def ft():
        return await outcome_of(deadline, store.fulltext_search(namespace, query, scopes, limit, deadline))

    async def vec():
        v = await query_vector
        return await outcome_of(deadline, store.vector_search(namespace, v, scopes, limit, deadline))

    if ft_first:
        a = await ft(); b = await vec()
    else:
        b = await vec(); a = await ft()
    return CandidateSearch(a, b)


async def run(path, rounds):
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(path))
    await store.open()
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.embed_query("warm")
    modes = ["gather", "serial-ft-first", "serial-vec-first", "gather-si0.5ms"]
    times = {m: [] for m in modes}
    default_si = sys.getswitchinterval()
    for r in range(rounds):
        for n, (q, scopes) in enumerate(plan):
            order = modes[n % len(modes):] + modes[: n % len(modes)]
            for mode in order:
                if mode.startswith("serial"):
                    ft_first = mode == "serial-ft-first"
                    async def sc(ns, qq, qv, sc_, lim, dl, ft_first=ft_first):
                        return await serial(store, ns, qq, qv, sc_, lim, dl, ft_first)
                    store.search_candidates = sc
                else:
                    store.search_candidates = SqliteGraphStore.search_candidates.__get__(store)
                sys.setswitchinterval(0.0005 if mode.endswith("si0.5ms") else default_si)
                started = time.perf_counter()
                await gather_candidates(store, embedder, BENCH_NAMESPACE, q, frozenset(scopes),
                                        [RetrieverName.FULLTEXT, RetrieverName.VECTOR],
                                        time.monotonic() + 10)
                if n >= WARM_UP:
                    times[mode].append((time.perf_counter() - started) * 1000)
                sys.setswitchinterval(default_si)
    for m in modes:
        v = times[m]
        print(f"{m:18s} p50 {statistics.median(v):6.2f} mean {statistics.mean(v):6.2f} p95 {statistics.quantiles(v, n=20)[18]:6.2f}")
    await store.close()

asyncio.run(run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1))
