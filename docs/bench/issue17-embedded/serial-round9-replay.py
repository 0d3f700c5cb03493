"""Replay the bench's 105 requests on a 100k store copy: timings, optional dump, optional profile."""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

import graphctx
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan, WARM_UP


def scrub(obj):
    if isinstance(obj, dict):
        return {k: scrub(v) for k, v in obj.items() if k not in ("trace_id", "elapsed_ms", "budget_ms")}
    if isinstance(obj, list):
        return [scrub(v) for v in obj]
    return obj


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--dump")
    ap.add_argument("--profile")
    ap.add_argument("--timings")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tokens", default="1500")
    args = ap.parse_args()
    print(graphctx.__file__, file=sys.stderr)
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(args.store))
    await store.open()
    embedder = UniversalSentenceEncoderEmbedder()
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    dumps = []
    result = {"latency": [], "stages": {}}
    prof = cProfile.Profile() if args.profile else None
    for question, scopes in plan[:WARM_UP]:  # loads the vector matrix: never dumped or timed
        await provider.aretrieve(ContextRequest(query=question, principal_id="bench", allowed_scopes=scopes,
                                                namespace=BENCH_NAMESPACE, max_tokens=1500, timeout_ms=10_000))
    for rep in range(args.repeat):
        for tokens in [int(t) for t in args.tokens.split(",")]:
            for n, (question, scopes) in enumerate(plan):
                request = ContextRequest(query=question, principal_id="bench", allowed_scopes=scopes,
                                         namespace=BENCH_NAMESPACE, max_tokens=tokens, timeout_ms=10_000)
                if prof and n >= WARM_UP:
                    prof.enable()
                started, cpu = time.perf_counter(), time.thread_time()
                response = await provider.aretrieve(request)
                elapsed = (time.perf_counter() - started) * 1000
                loop_cpu = (time.thread_time() - cpu) * 1000
                if prof:
                    prof.disable()
                if args.dump:
                    dumps.append(scrub(json.loads(response.model_dump_json())))
                if n < WARM_UP:
                    continue
                result["latency"].append(elapsed)
                result.setdefault("loop_cpu", []).append(loop_cpu)
                for s in response.manifest.stages:
                    result["stages"].setdefault(s.stage, []).append(float(s.elapsed_ms))
    await store.close()
    if args.dump:
        Path(args.dump).write_text("\n".join(json.dumps(d, sort_keys=True, ensure_ascii=False) for d in dumps) + "\n")
    if prof:
        prof.dump_stats(args.profile)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(60)
    def pct(v):
        q = statistics.quantiles(v, n=100, method="inclusive")
        return {"p50": round(q[49], 2), "p95": round(q[94], 2)}
    summary = {"retrieve_ms": pct(result["latency"]), "loop_thread_cpu_ms": pct(result["loop_cpu"]), "stage_ms": {k: pct(v) for k, v in sorted(result["stages"].items())}}
    print(json.dumps(summary))
    if args.timings:
        Path(args.timings).write_text(json.dumps(summary))

asyncio.run(main())
