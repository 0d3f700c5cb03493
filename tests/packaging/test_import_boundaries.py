"""The import boundaries hold (issue 14): the ``[tool.importlinter]`` contracts in pyproject.toml.

- the request/response contract imports nothing of ours but the error root;
- retrieve, ingest and context never import an adapter (a concrete store, embedder or LLM
  client) or a face (CLI, server, demo, terminal rendering, test doubles);
- the shared rooms (``graphctx.text``, ``graphctx.llm``) import no stage, store or face;
- the runtime package never imports the QA lab (the lab registers its commands as entry points);
- no import cycle between the sibling packages or modules of any package in graphctx.
"""

from __future__ import annotations

from pathlib import Path

from importlinter.cli import lint_imports

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_every_import_contract_is_kept() -> None:
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True, no_logo=True) == 0
