"""Long lab runs say how far they are on stderr while they run, also when stderr is not a
terminal (a CI log), and keep stdout for the results."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx_lab.chaos.scenario import ChaosEnv, FunctionScenario, Trial, TrialRunner
from graphctx_lab.commands import run_chaos_command


def test_bench_http_prints_its_phases_and_request_progress_to_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", "bench", "http", "--clients", "2",
         "--requests", "12", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "graphctx bench http: ingesting the demo corpus"
    assert lines[1].startswith("graphctx bench http: starting graphctx serve on port ")
    assert "graphctx bench http: 12 requests from 2 clients" in lines
    assert lines[-1] == "graphctx bench http: 12/12 requests, 0 errors"
    report = json.loads((tmp_path / "http.json").read_text(encoding="utf-8"))
    assert (report["completed"], report["errors"]) == (12, 0)
    assert done.stdout.splitlines()[-1] == f"wrote {tmp_path / 'http.json'}"


def counting_setup(env: ChaosEnv) -> Iterator[TrialRunner]:
    def run(trial: Trial) -> None:
        trial.check(trial.workdir.is_dir(), "the trial has its own folder")

    yield run


def test_chaos_prints_each_scenarios_progress_to_a_stderr_that_is_no_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = [
        FunctionScenario("first", "trials get folders", 3, counting_setup),
        FunctionScenario("second", "trials get folders", 2, counting_setup),
    ]
    monkeypatch.setattr("graphctx_lab.chaos.registry.select", lambda names: scenarios)
    args = argparse.Namespace(
        trials=None, scenarios=[], list=False, neo4j="skip", data=tmp_path, seed=0,
        out=tmp_path / "chaos.json",
    )  # fmt: skip
    assert run_chaos_command(args) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert all(line.startswith("graphctx chaos: ") for line in lines)
    # a scenario's last trial is always shown; the ones between at most every few seconds
    assert [line for line in lines if "scenario" in line or line.endswith(("3/3", "2/2"))] == [
        "graphctx chaos: 2 scenario(s)",
        "graphctx chaos: first: trial 3/3",
        "graphctx chaos: second: trial 2/2",
    ]
    assert captured.out.splitlines()[-1] == f"wrote {tmp_path / 'chaos.json'}"
