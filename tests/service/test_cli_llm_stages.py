"""``graphctx eval`` options of the optional LLM stages: a wrong stage name is a typed error."""

from __future__ import annotations

import subprocess
import sys


def test_an_unknown_llm_stage_is_a_one_line_typed_error_before_anything_loads() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", "eval", "--llm-url", "http://127.0.0.1:9/v1",
         "--llm-stages", "rewrite,telepathy"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("graphctx: error [invalid_request]")
    assert "rewrite, route, rerank" in done.stderr
    assert "Traceback" not in done.stderr
    assert "embedder:" not in done.stdout  # refused before the embedder was loaded
