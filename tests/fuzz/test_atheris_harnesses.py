"""The coverage-guided harnesses of ``tools/fuzz`` run for a bounded time and find nothing.

Each runs in its own interpreter (libFuzzer owns the process) for a few seconds; a finding
fails the test and leaves its reproducer in ``.fuzz/crashes/<target>/`` (git-ignored).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from profiles import PROFILE

pytest.importorskip("atheris", reason="atheris (dev extra, Linux wheels) is not installed")

TOOLS = Path(__file__).resolve().parents[2] / "tools" / "fuzz"
CRASHES = TOOLS.parents[1] / ".fuzz" / "crashes"
HARNESSES = sorted(path.name for path in TOOLS.glob("fuzz_*.py"))
SECONDS_EACH = 6 if PROFILE.name == "ci" else 600


def _findings(target: str) -> set[str]:
    folder = CRASHES / target
    return {entry.name for entry in folder.iterdir()} if folder.is_dir() else set()


def test_every_harness_is_collected() -> None:
    assert HARNESSES == ["fuzz_cypher_guard.py", "fuzz_frontmatter.py", "fuzz_loaders.py"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_harness_runs_its_time_budget_without_a_finding(harness: str) -> None:
    target = harness.removeprefix("fuzz_").removesuffix(".py")
    before = _findings(target)
    completed = subprocess.run(
        [sys.executable, str(TOOLS / harness), f"-max_total_time={SECONDS_EACH}"],
        capture_output=True,
        text=True,
        timeout=SECONDS_EACH * 3 + 60,
        check=False,
    )
    new = sorted(_findings(target) - before)
    assert (completed.returncode, new) == (0, []), completed.stderr[-3000:]
    assert "Done " in completed.stderr, completed.stderr[-2000:]
