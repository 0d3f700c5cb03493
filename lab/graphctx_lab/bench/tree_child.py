"""One measurement run by a lab module under another tree's ``src/`` (an A/B baseline).

The child process imports graphctx from ``src`` and the lab from this checkout, prints its
result as one line ``prefix + JSON`` on stdout, and everything else goes to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["run_in_tree"]

LAB_ROOT = Path(__file__).resolve().parents[2]


def run_in_tree(
    src: Path,
    module: str,
    args: Sequence[str],
    prefix: str,
    *,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> Any:
    """``python -m module *args`` with ``src`` first on the path; its parsed result line."""
    child_env = dict(os.environ if env is None else env)
    child_env["PYTHONPATH"] = os.pathsep.join([str(src.resolve()), str(LAB_ROOT)])
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env=child_env,
        timeout=timeout_s,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith(prefix):
            return json.loads(line[len(prefix) :])
    raise RuntimeError(f"{module} under {src} failed ({done.returncode}): {done.stderr[-2000:]}")
