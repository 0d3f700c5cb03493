"""Every Python snippet in the README runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def python_snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_a_quickstart() -> None:
    assert python_snippets()


@pytest.mark.parametrize("snippet", python_snippets())
def test_readme_snippet_runs(
    snippet: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "payments.md").write_text(
        "# Payment gateway restart\n\nDrain traffic, then restart the payment gateway.\n"
    )
    exec(compile(snippet, str(README), "exec"), {})
    assert "S1" in capsys.readouterr().out
