"""``graphctx bench cold``: what a fresh process pays before it answers.

Every figure is a fresh interpreter (the median of ``runs``; each run's peak RSS from
GNU ``time``): ``import graphctx``, ``from graphctx import open``, and a cold ``graphctx search``
on a small store this bench writes (the bundled demo corpus). The search also runs with a
deadline shorter than the embedder's load, to show whether the load is charged to it. A
phase breakdown of one cold search (imports, store open, model load, retrieval) is timed
inside a child process.

``--baseline SRC`` (an older tree's ``src/``, e.g. ``git archive int src | tar -x -C /tmp/old``)
runs every measurement on that tree too, interleaved run by run, and reports the ratios.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from graphctx.demo.run import corpus_path
from graphctx.errors import ConfigurationError

__all__ = ["run_cold_bench"]

NAMESPACE: Final = "cold"
QUERY: Final = "which message broker carries shipment events"
SHORT_DEADLINE_MS: Final = 400  # under the offline model's load (about 1 s)
RUNS: Final = 5
GNU_TIME: Final = shutil.which("time", path="/usr/bin:/bin")  # peak RSS per child (%M)

PHASES: Final = """\
import json, sys, time
t0 = time.perf_counter()
from graphctx.adapters import open_provider
from graphctx.contract import ContextRequest
t1 = time.perf_counter()
provider = open_provider(sys.argv[1])
t2 = time.perf_counter()
provider.embedder.embed_query("warm-up")  # the model load, by the port every tree has
t3 = time.perf_counter()
response = provider.retrieve(ContextRequest(query=sys.argv[2], principal_id="sam",
    allowed_scopes=["eng"], namespace=sys.argv[3]))
t4 = time.perf_counter()
provider.close()
print(json.dumps({"import_s": t1 - t0, "open_store_s": t2 - t1, "model_load_s": t3 - t2,
    "retrieve_s": t4 - t3, "items": len(response.items)}))
"""


@dataclass(frozen=True)
class Run:
    wall_s: float
    peak_rss_mb: float
    stdout: str


@dataclass(frozen=True)
class Figure:
    median_s: float
    min_s: float
    max_s: float
    peak_rss_mb: float  # median over the runs


def _run_measured(argv: list[str], src: Path | None) -> Run:
    """Run ``argv`` to completion: wall time, and its peak RSS as GNU time reports it.

    Not ``wait4`` from here: a child started with vfork keeps this process's high-water mark
    across exec, so every small child would report the bench's own RSS."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="graphctx-cold-run-") as tmp:
        rss_file = Path(tmp) / "rss"
        command = [GNU_TIME, "-f", "%M", "-o", str(rss_file), *argv] if GNU_TIME else argv
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise ConfigurationError(
                f"cold bench: {' '.join(argv[1:4])} failed: {done.stderr.strip()[-400:]}"
            )
        rss_kb = float(rss_file.read_text().split()[-1]) if GNU_TIME else float("nan")
    return Run(wall, rss_kb / 1024, done.stdout)


def _figure(runs: list[Run]) -> Figure:
    walls = [r.wall_s for r in runs]
    return Figure(
        round(statistics.median(walls), 3),
        round(min(walls), 3),
        round(max(walls), 3),
        round(statistics.median(r.peak_rss_mb for r in runs), 1),
    )


def _cli(store: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "graphctx.cli.main",
        "--store",
        str(store),
        "search",
        QUERY,
        "--namespace",
        NAMESPACE,
        "--principal",
        "sam",
        "--scope",
        "eng",
        "--json",
        *extra,
    ]


def _commands(store: Path) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "import graphctx": [python, "-c", "import graphctx"],
        "from graphctx import open": [python, "-c", "from graphctx import open"],
        "graphctx search (cold)": _cli(store),
        f"graphctx search --timeout-ms {SHORT_DEADLINE_MS}": _cli(
            store, "--timeout-ms", str(SHORT_DEADLINE_MS)
        ),
    }


def _vector_stage(stdout: str) -> str:
    stages = json.loads(stdout)["manifest"]["stages"]
    return ",".join(s["status"] for s in stages if s["stage"] == "candidates.vector") or "absent"


def run_cold_bench(out: Path, runs: int = RUNS, baseline: Path | None = None) -> int:
    trees: dict[str, Path | None] = {"current": None}
    if baseline is not None:
        if not (baseline / "graphctx" / "__init__.py").is_file():
            raise ConfigurationError(f"--baseline {baseline}: expected a src/ with graphctx/")
        trees["baseline"] = baseline.resolve()
    with tempfile.TemporaryDirectory(prefix="graphctx-cold-") as tmp:
        store = Path(tmp) / "cold.sqlite"
        ingest = [sys.executable, "-m", "graphctx.cli.main", "--store", str(store), "ingest",
                  str(corpus_path()), "--namespace", NAMESPACE, "--scope", "eng"]  # fmt: skip
        _run_measured(ingest, None)
        commands = _commands(store)
        measured: dict[str, dict[str, list[Run]]] = {t: {c: [] for c in commands} for t in trees}
        phases: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
        for _ in range(runs):  # interleaved, so both trees see the same machine load
            for tree, src in trees.items():
                for name, argv in commands.items():
                    measured[tree][name].append(_run_measured(argv, src))
                phase_argv = [sys.executable, "-c", PHASES, str(store), QUERY, NAMESPACE]
                phases[tree].append(json.loads(_run_measured(phase_argv, src).stdout))
    short = f"graphctx search --timeout-ms {SHORT_DEADLINE_MS}"
    report: dict[str, object] = {
        "runs": runs,
        "python": sys.version.split()[0],
        "load_average": os.getloadavg(),
        "baseline_src": None if baseline is None else str(baseline),
        "trees": {
            tree: {
                "figures": {name: asdict(_figure(rs)) for name, rs in measured[tree].items()},
                "short_deadline_vector_stage": sorted(
                    {_vector_stage(r.stdout) for r in measured[tree][short]}
                ),
                "cold_search_phases_median_s": {
                    key: round(statistics.median(p[key] for p in phases[tree]), 3)
                    for key in ("import_s", "open_store_s", "model_load_s", "retrieve_s")
                },
            }
            for tree in trees
        },
    }
    if baseline is not None:
        current = measured["current"]
        report["ratios_current_over_baseline"] = {
            name: round(
                _figure(current[name]).median_s / _figure(measured["baseline"][name]).median_s, 3
            )
            for name in commands
        }
    out.mkdir(parents=True, exist_ok=True)
    (out / "cold.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    table = _markdown(report, list(commands), list(trees))
    (out / "cold.md").write_text(table, encoding="utf-8")
    print(table, end="")
    print(f"wrote {out / 'cold.json'} and {out / 'cold.md'}")
    return 0


def _markdown(report: dict[str, object], commands: list[str], trees: list[str]) -> str:
    data = report["trees"]
    assert isinstance(data, dict)
    ratios = report.get("ratios_current_over_baseline") or {}
    assert isinstance(ratios, dict)
    head = "| command | " + " | ".join(f"{t} median s (min-max) | {t} peak RSS MB" for t in trees)
    lines = [head + (" | ratio |" if ratios else " |")]
    lines.append("|---" * (1 + 2 * len(trees) + (1 if ratios else 0)) + "|")
    for name in commands:
        cells = []
        for tree in trees:
            f = data[tree]["figures"][name]
            cells += [f"{f['median_s']} ({f['min_s']}-{f['max_s']})", f"{f['peak_rss_mb']}"]
        ratio = f" {ratios[name]}x |" if ratios else ""
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |" + ratio)
    lines.append("")
    for tree in trees:
        phases = data[tree]["cold_search_phases_median_s"]
        stage = data[tree]["short_deadline_vector_stage"]
        lines.append(
            f"- {tree}: cold search phases (median s) "
            + ", ".join(f"{k.removesuffix('_s')} {v}" for k, v in phases.items())
            + f"; vector stage with a {SHORT_DEADLINE_MS} ms deadline: {', '.join(stage)}"
        )
    return "\n".join(lines) + "\n"
