"""The README's snippets that need more than a store file run here: ``title="remote"`` against
a real ``graphctx serve`` holding sam's project, ``title="agent-framework"`` with the OpenAI
chat client pointed at the local fake model. (The plain ``python`` snippets run in
tests/service/test_readme.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.server.config import ServiceSettings
from graphctx.server.keys import generate_key, hash_key
from graphctx.testing.fake_chat import FakeChatServer
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import unopened_provider

README = Path(__file__).resolve().parents[2] / "README.md"
PAYMENTS = "# Payment gateway restart\n\nDrain traffic, then restart the payment gateway.\n"


def snippet(title: str) -> str:
    found = re.findall(
        rf'```python title="{title}"\n(.*?)```', README.read_text(encoding="utf-8"), re.DOTALL
    )
    assert len(found) == 1, f"the README has one {title!r} snippet"
    return str(found[0])


@pytest.fixture
def in_docs_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "payments.md").write_text(PAYMENTS, encoding="utf-8")
    return tmp_path


@pytest.fixture
def sams_service(
    in_docs_folder: Path, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[tuple[str, str]]:
    store = in_docs_folder / "service.sqlite"
    with unopened_provider(store, embedder).open() as provider:
        provider.ingest_path(in_docs_folder / "docs", namespace="acme", scopes=["eng"])
    key = generate_key("sam")
    entry = {
        "id": "sam",
        "hash": hash_key(key, n=2**10),
        "principal": "sam",
        "projects": {"acme": {"scopes": ["eng"]}},
    }
    app = create_app(ServiceSettings(keys=[entry]), unopened_provider(store, embedder))
    with serve_in_thread(app) as url:
        yield url, key


def test_the_remote_snippet_runs_against_a_real_service(
    sams_service: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    url, key = sams_service
    exec(compile(snippet("remote"), str(README), "exec"), {"URL": url, "KEY": key})
    source = (Path.cwd() / "docs" / "payments.md").as_uri()
    assert capsys.readouterr().out.splitlines() == [
        '{"principal_id":"sam","projects":[{"project_id":"acme","scopes":["eng"]}]}',
        f"S1 {source}",
        "['S1']",
    ]


def test_the_agent_framework_snippet_runs_an_agent(
    in_docs_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeChatServer(lambda body: "Drain traffic, then restart it [S1].") as model:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{model.base_url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")
        exec(compile(snippet("agent-framework"), str(README), "exec"), {})
    assert capsys.readouterr().out == "Drain traffic, then restart it [S1].\n"
    sent = "\n".join(str(m["content"]) for m in model.requests[0]["messages"])
    assert "restart the payment gateway." in sent  # the document reached the model as context
