"""``graphctx chaos``: run the fault and crash scenarios and print scenario / trials / failures."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

from graphctx.errors import ConfigurationError, InvalidRequestError

__all__ = ["add_chaos_command", "run_chaos_command"]


def add_chaos_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chaos = subparsers.add_parser(
        "chaos", help="run fault and crash scenarios; print scenario / trials / failures"
    )
    chaos.add_argument("--scenario", action="append", default=[], dest="scenarios",
                       help="run only this scenario (repeatable); see --list")  # fmt: skip
    chaos.add_argument("--trials", type=int, help="trials per scenario (default: its own)")
    chaos.add_argument("--seed", type=int, default=0)
    chaos.add_argument("--out", type=Path, default=Path("bench-results/chaos.json"))
    chaos.add_argument("--data", type=Path, help="shared data folder (default ../shared/data)")
    chaos.add_argument(
        "--neo4j",
        choices=["auto", "require", "skip"],
        default="auto",
        help="Neo4j scenarios start their own server (auto: skip when Java/Maven are missing)",
    )
    chaos.add_argument("--list", action="store_true", help="list the scenarios and exit")


def run_chaos_command(args: argparse.Namespace) -> int:
    from graphctx.chaos.registry import select
    from graphctx.chaos.report import render_table, write_json
    from graphctx.chaos.runner import run_scenarios
    from graphctx.chaos.scenario import ChaosEnv, Scenario
    from graphctx.eval.bench import default_data_dir

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
        from graphctx.chaos.neo4j_server import neo4j_server_factory

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

        def progress(line: str) -> None:
            if sys.stderr.isatty():
                print(f"\r{line:<70}", end="", file=sys.stderr, flush=True)

        results = run_scenarios(runnable, env_for, args.trials, progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(render_table(results))
    write_json(results, args.out)
    print(f"wrote {os.fspath(args.out)}")
    return 1 if any(r.failures for r in results) else 0
