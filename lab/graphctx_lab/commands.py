"""What ``graphctx bench`` and ``graphctx chaos`` run (their arguments: cli.lab_commands)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

from graphctx.errors import ConfigurationError, InvalidRequestError
from graphctx.store.neo4j import is_neo4j_location
from graphctx_lab.progress import Progress

__all__ = ["run_bench_command", "run_chaos_command"]


def run_bench_command(args: argparse.Namespace) -> int:
    from graphctx_lab.bench.lexical import run_lexical_bench
    from graphctx_lab.bench.store import default_data_dir, run_bench

    data = args.data or default_data_dir()
    if args.what == "lexical":
        return run_lexical_bench(args.out, data)
    if args.what == "neo4j":
        from graphctx_lab.bench.on_neo4j.run import run_neo4j_bench

        store = getattr(args, "store", None)  # the global --store, None when not given
        if store is not None and is_neo4j_location(store):
            os.environ.setdefault("NEO4J_URI", store)
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        return run_neo4j_bench(args.out, sizes, args.queries, data)
    if args.what == "vectors":
        from graphctx_lab.bench.vector_scale import run_vector_bench

        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        return run_vector_bench(args.out, sizes=sizes, queries=args.queries, data=data)
    if args.what == "entities":
        from graphctx_lab.bench.entities import run_entity_bench

        return run_entity_bench(args.out)
    if args.what == "cold":
        from graphctx_lab.bench.cold import run_cold_bench

        return run_cold_bench(args.out, baseline=args.baseline)
    if args.what == "llm":
        from graphctx_lab.bench.llm_stages import run_llm_stages_bench

        return run_llm_stages_bench(args.out)
    if args.what == "ingest":
        from graphctx_lab.bench.ingest import run_ingest_bench

        return run_ingest_bench(
            args.out, data, args.documents, args.baseline, neo4j=not args.no_neo4j
        )
    if args.what == "e5":
        from graphctx_lab.bench.e5 import run_e5_bench

        return run_e5_bench(args.out, data, args.documents)
    if args.what == "http":
        from graphctx_lab.bench.http import run_load_bench

        out = args.out / "http.json"
        report = run_load_bench(
            clients=args.clients, requests=args.requests, workers=args.workers, out=out
        )
        latency = report["latency_ms"]
        print(
            f"{report['completed']} requests, {report['errors']} errors,"
            f" {report['throughput_rps']} req/s, p50 {latency['p50']} ms, p95 {latency['p95']} ms"
            f" ({report['workers']} workers, load average {report['load_average']['before']})"
        )
        print(f"wrote {os.fspath(out)}")
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    return run_bench(
        args.out,
        sizes=sizes,
        queries=args.queries,
        data=data,
        store_dir=args.store_dir,
        ann=args.ann,
    )


def run_chaos_command(args: argparse.Namespace) -> int:
    from graphctx_lab.bench.store import default_data_dir
    from graphctx_lab.chaos.registry import select
    from graphctx_lab.chaos.report import render_table, write_json
    from graphctx_lab.chaos.runner import run_scenarios
    from graphctx_lab.chaos.scenario import ChaosEnv, Scenario

    if args.trials is not None and args.trials < 1:
        raise InvalidRequestError("--trials must be at least 1", field="trials")
    try:
        scenarios = select(args.scenarios)
    except ValueError as exc:
        raise InvalidRequestError(str(exc), field="scenario") from exc
    if args.list:
        for s in scenarios:
            flag = " [neo4j]" if s.needs_neo4j else ""
            print(f"{s.name}\t{s.default_trials} trials{flag}\t{s.promise}")
        return 0
    neo4j = None
    if args.neo4j != "skip" and any(s.needs_neo4j for s in scenarios):
        from graphctx_lab.chaos.neo4j_server import neo4j_server_factory

        try:
            neo4j = neo4j_server_factory()
        except ConfigurationError as exc:
            if args.neo4j == "require":
                raise
            print(f"graphctx chaos: skipping Neo4j scenarios: {exc.message}", file=sys.stderr)
    runnable: list[Scenario] = [s for s in scenarios if neo4j is not None or not s.needs_neo4j]
    data = args.data or default_data_dir()
    # Outages are the point here: the driver's and the service's per-request complaints about
    # them would bury the table (failures are counted and reported by the scenarios).
    for noisy in (
        "neo4j",
        "graphctx.server",
        "graphctx.provider",
        "graphctx.gate",
        "uvicorn.error",
    ):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="graphctx-chaos-") as tmp:

        def env_for(scenario: Scenario) -> ChaosEnv:
            return ChaosEnv(Path(tmp) / scenario.name, args.seed, data, neo4j)

        progress = Progress("graphctx chaos")

        def on_trial(line: str) -> None:
            done, _, total = line.rpartition(" ")[2].partition("/")
            progress.update(line, final=done == total)

        progress.update(f"{len(runnable)} scenario(s)", final=True)
        results = run_scenarios(runnable, env_for, args.trials, on_trial)
    progress.end_line()
    print(render_table(results))
    write_json(results, args.out)
    print(f"wrote {os.fspath(args.out)}")
    return 1 if any(r.failures for r in results) else 0
