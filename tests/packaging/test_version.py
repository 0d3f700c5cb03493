"""``graphctx --version`` prints the installed distribution's version, as pyproject declares it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_version_prints_the_version_pyproject_declares() -> None:
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    done = subprocess.run(
        [Path(sys.executable).with_name("graphctx"), "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"graphctx {declared}\n", "")
    assert metadata.version("graphctx") == declared
