"""graphctx in a fresh interpreter as a plain ``pip install graphctx`` (no extras) leaves it.

The test venv has every extra installed. To see what a base install can do, a child process
gets a meta-path finder that makes every module of a distribution outside graphctx's base
dependency closure unimportable, exactly as a package that is not installed: ``import neo4j``
raises ``ModuleNotFoundError``. The closure is computed from the installed metadata (the
``Requires-Dist`` lines without an extra, followed transitively), so it follows pyproject.toml.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = ["base_closure", "blocked_modules", "run_base_cli", "run_base_python"]

BLOCKER = """\
import sys

BLOCKED = frozenset({blocked!r})


class NotInstalled:
    \"\"\"Finds nothing for a blocked top-level name, the way the import system reports an
    absent package.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


already = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
if already:
    raise SystemExit(f"blocked modules were imported at start-up: {{already}}")
sys.meta_path.insert(0, NotInstalled())
"""

# what a fresh ``python -m venv`` holds before graphctx is installed into it (setuptools only
# up to Python 3.11; its .pth file imports _distutils_hack at start-up)
VENV_SEED = ("pip", "setuptools")

CLI = "from graphctx.cli.main import main\nraise SystemExit(main(sys.argv[1:]))\n"


@cache
def base_closure() -> frozenset[str]:
    """Canonical names of graphctx, every distribution its base install pulls in (with the
    extras each requirement asks for, like ``pyjwt[crypto]``), and the venv's own installers."""
    seen: set[tuple[str, str]] = set()  # (distribution, extra or "")
    todo = [(name, "") for name in ("graphctx", *VENV_SEED)]
    while todo:
        name, extra = todo.pop()
        name = canonicalize_name(name)
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # a requirement of another platform
            continue
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": extra}):
                todo.append((requirement.name, ""))
                todo.extend((requirement.name, wanted) for wanted in requirement.extras)
    return frozenset(name for name, _ in seen)


@cache
def blocked_modules() -> frozenset[str]:
    """Top-level modules installed here that a base install would not have."""
    closure = base_closure()
    return frozenset(
        module
        for module, dists in metadata.packages_distributions().items()
        if not any(canonicalize_name(d) in closure for d in dists)
    )


def run_base_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (with ``sys`` imported) in a child process that has only the base install."""
    script = BLOCKER.format(blocked=sorted(blocked_modules())) + code
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_base_cli(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """``graphctx *args`` as a base install runs it."""
    return run_base_python(CLI, *args)
