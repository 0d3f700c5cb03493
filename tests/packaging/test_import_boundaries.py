"""The import boundaries hold (issue 14): the ``[tool.importlinter]`` contracts in pyproject.toml.

- the request/response contract imports nothing of ours but the error root;
- retrieve, ingest and context never import an adapter (a concrete store, embedder or LLM
  client) or a face (CLI, server, demo, terminal rendering, test doubles);
- the shared rooms (``graphctx.text``, ``graphctx.llm``) import no stage, store or face;
- the runtime package never imports the QA lab (the lab registers its commands as entry points);
- no import cycle between the sibling packages or modules of any package in graphctx.

import-linter runs in a child process: it reconfigures logging in the process it runs in,
which would change what later tests' log captures see.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = (
    "import sys; from importlinter.cli import lint_imports;"
    " sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))"
)


def test_every_import_contract_is_kept() -> None:
    run = subprocess.run(
        [sys.executable, "-c", LINT, str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
