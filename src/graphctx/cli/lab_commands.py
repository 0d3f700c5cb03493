"""``graphctx bench`` and ``graphctx chaos``: their arguments here, their work in the QA lab.

The lab (``graphctx_lab``, ``lab/`` in a source checkout) is not part of the runtime package;
``make .venv/.installed`` installs it next to graphctx. Without it both commands exit with a
:class:`~graphctx.errors.ConfigurationError` (code ``lab_not_installed``) that says how to
install it. The runtime package never imports the lab: the lab registers the two commands as
entry points (group ``graphctx.lab_commands`` in ``lab/pyproject.toml``) and this module looks
them up by name.
"""

from __future__ import annotations

import argparse
from importlib.metadata import entry_points
from pathlib import Path
from typing import Final

from graphctx.errors import ConfigurationError

__all__ = [
    "LAB_COMMANDS",
    "LAB_NOT_INSTALLED",
    "add_bench_command",
    "add_chaos_command",
    "run_lab_command",
]

LAB_COMMANDS: Final = ("bench", "chaos")
LAB_NOT_INSTALLED: Final = "lab_not_installed"
LAB_PACKAGE: Final = "graphctx_lab"
ENTRY_POINT_GROUP: Final = "graphctx.lab_commands"


def add_bench_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = subparsers.add_parser("bench", help="measure ingest and retrieval; write JSON results")
    bench.add_argument(
        "what",
        nargs="?",
        choices=[
            "store",
            "vectors",
            "lexical",
            "http",
            "entities",
            "neo4j",
            "cold",
            "llm",
            "ingest",
            "e5",
        ],
        default="store",
        help="neo4j: graphctx vs neo4j-graphrag on one server (NEO4J_URI, or one it starts);"
        " cold: import and cold-CLI times in fresh processes; llm: the optional LLM stages\x27"
        " added latency against a local recorded chat server;"
        " ingest: chunks/s of embedder, store and end to end on both backends;"
        " e5: texts/s of the e5 embedder, serialised against concurrent calls;"
        " vectors: the vector stage alone up to 1M chunks, exact scan vs the ANN index",
    )
    bench.add_argument(
        "--out",
        type=Path,
        default=Path("bench-results"),
        help="results folder (default: %(default)s)",
    )
    bench.add_argument("--data", type=Path, help="shared data folder (default ../shared/data)")
    bench.add_argument("--sizes", default="10000,100000", help="chunk counts, comma separated")
    bench.add_argument(
        "--queries", type=int, default=200, help="queries per size (default: %(default)s)"
    )
    bench.add_argument("--clients", type=int, default=50, help="http: concurrent clients")
    bench.add_argument("--requests", type=int, default=2000, help="http: requests in total")
    bench.add_argument(
        "--workers",
        type=int,
        default=2,
        help="http: the server's worker processes, serve --workers (default: %(default)s)",
    )
    bench.add_argument(
        "--baseline", type=Path, help="cold, ingest: an older tree's src/ to time side by side"
    )
    bench.add_argument(
        "--documents", type=int, default=1000, help="ingest: documents; e5: documents per set"
    )
    bench.add_argument(
        "--no-neo4j",
        action="store_true",
        help="ingest: the embedded store only (no Neo4j server is started or used)",
    )
    bench.add_argument(
        "--store-dir",
        type=Path,
        help="store: keep each size's store file in this folder and reuse it on later runs",
    )
    bench.add_argument(
        "--ann",
        action="store_true",
        help="store: also run with the approximate vector index (the ann extra); recall vs exact",
    )


def add_chaos_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chaos = subparsers.add_parser(
        "chaos", help="run fault and crash scenarios; print scenario / trials / failures"
    )
    chaos.add_argument("--scenario", action="append", default=[], dest="scenarios",
                       help="run only this scenario (repeatable); see --list")  # fmt: skip
    chaos.add_argument("--trials", type=int, help="trials per scenario (default: its own)")
    chaos.add_argument(
        "--seed", type=int, default=0, help="seed of the fault schedule (default: %(default)s)"
    )
    chaos.add_argument(
        "--out",
        type=Path,
        default=Path("bench-results/chaos.json"),
        help="results file (default: %(default)s)",
    )
    chaos.add_argument("--data", type=Path, help="shared data folder (default ../shared/data)")
    chaos.add_argument(
        "--neo4j",
        choices=["auto", "require", "skip"],
        default="auto",
        help="Neo4j scenarios start their own server (auto: skip when Java/Maven are missing)",
    )
    chaos.add_argument("--list", action="store_true", help="list the scenarios and exit")


def run_lab_command(args: argparse.Namespace) -> int:
    """Run ``graphctx bench`` or ``graphctx chaos`` (``args.command``) with the lab."""
    found = entry_points(group=ENTRY_POINT_GROUP, name=args.command)
    try:
        if not found:
            raise ModuleNotFoundError(name=LAB_PACKAGE)
        run = next(iter(found)).load()
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != LAB_PACKAGE:
            raise  # the lab is there but one of its own imports is not: a real fault
        raise ConfigurationError(
            f"graphctx {args.command} runs from graphctx's QA lab ({LAB_PACKAGE}), which is"
            " not installed: in a graphctx source checkout run `pip install -e lab`"
            " (`make .venv/.installed` does it)",
            code=LAB_NOT_INSTALLED,
        ) from None
    return int(run(args))
