"""``--embedder`` on every command that embeds, and ``graphctx eval`` on a corpus with metadata."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphctx import open as graphctx_open
from graphctx.adapters import build_provider
from graphctx.cli.main import build_parser
from graphctx.embed import E5Embedder
from graphctx.server.config import load_settings

E5_NAME = "multilingual-e5-small-q4"
STATUTE = [
    {
        "id": "a1",
        "law": "시험법",
        "article_no": "제1조",
        "title": "목적",
        "chapter": "제1장 총칙",
        "section": None,
        "text": "이 법은 근로자의 휴가와 임금에 관한 기준을 정한다.",
    },
    {
        "id": "a2",
        "law": "시험법",
        "article_no": "제2조",
        "title": "연차 휴가",
        "chapter": "제2장 휴가",
        "section": None,
        "text": "사용자는 1년간 80퍼센트 이상 출근한 근로자에게 15일의 유급휴가를 주어야 한다.",
    },
    {
        "id": "a3",
        "law": "시험법",
        "article_no": "제3조",
        "title": "벌칙",
        "chapter": "제3장 벌칙",
        "section": None,
        "text": "제2조를 위반한 자는 2년 이하의 징역 또는 2천만원 이하의 벌금에 처한다.",
    },
]
QUESTIONS = [
    {"id": "q1", "question": "연차 유급휴가는 며칠인가요?", "gold": ["a2"]},
    {"id": "q2", "question": "유급휴가를 주지 않으면 어떤 벌칙이 있나요?", "gold": ["a3", "a2"]},
]


def graphctx(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ingest", "docs"], "use"),
        (["ingest", "docs", "--embedder", "e5"], "e5"),
        (["search", "q", "--principal", "p", "--scope", "s", "--embedder", "e5"], "e5"),
        (["search", "q", "--principal", "p", "--scope", "s"], "use"),
        (["eval", "--embedder", "e5"], "e5"),
        (["eval"], "use"),
        (["serve", "--embedder", "e5"], "e5"),
        (["serve"], None),  # the service config (or GRAPHCTX_EMBEDDER) decides
    ],
)
def test_every_command_that_embeds_takes_an_embedder_spec(
    argv: list[str], expected: str | None
) -> None:
    assert build_parser().parse_args(argv).embedder == expected


def test_searching_a_store_with_another_embedder_is_a_one_line_typed_error(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "runbook.md").write_text("# Runbook\n\nRestart the payment gateway.\n", "utf-8")
    store = tmp_path / "store.sqlite"
    ingest = graphctx("--store", store, "ingest", docs, "--scope", "eng")
    assert ingest.returncode == 0, ingest.stderr
    search = ("search", "restart the gateway", "--principal", "sam", "--scope", "eng")
    done = graphctx("--store", store, *search, "--embedder", "e5")
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("graphctx: error [embedder_mismatch]:")
    assert "use-multilingual-v3 (512 dims)" in done.stderr
    assert E5_NAME in done.stderr
    assert graphctx("--store", store, *search, "--json").returncode == 0


def test_an_unknown_embedder_spec_is_a_configuration_error(tmp_path: Path) -> None:
    done = graphctx("--store", tmp_path / "s.sqlite", "ingest", tmp_path, "--embedder", "bge")
    assert done.returncode == 3
    assert done.stderr.startswith("graphctx: error [configuration_error]:")


def test_eval_on_a_statute_corpus_keeps_its_metadata_and_names_the_embedder(
    tmp_path: Path,
) -> None:
    corpus, questions, out = tmp_path / "law.jsonl", tmp_path / "asked.jsonl", tmp_path / "out"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in STATUTE), "utf-8")
    questions.write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), "utf-8"
    )
    done = graphctx(
        "eval", "--corpus", corpus, "--questions", questions, "--embedder", "e5", "--out", out
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "eval.json").read_text("utf-8"))
    assert report["embedder"] == E5_NAME
    assert (out / "eval.md").read_text("utf-8").startswith(f"# graphctx eval ({E5_NAME})\n")
    (dataset,) = report["datasets"]
    assert (dataset["documents"], dataset["questions"]) == (3, 2)
    # 제3조 cites 제2조: resolvable only with the records' law and article_no kept
    assert dataset["graph"]["offline"]["references"] == 1
    assert set(dataset["methods"]) >= {"fulltext", "vector", "hybrid", "hybrid+graph", "auto"}
    assert dataset["methods"]["vector"]["questions"] == 2


def test_the_library_and_the_service_config_take_an_embedder_spec(tmp_path: Path) -> None:
    with graphctx_open(tmp_path / "lib.sqlite", embedder="e5") as ctx:
        assert isinstance(ctx.embedder, E5Embedder)
    config = tmp_path / "service.yaml"
    config.write_text("store: svc.sqlite\nembedder: e5\n", "utf-8")
    settings = load_settings(config)
    assert isinstance(
        build_provider(tmp_path / "svc.sqlite", settings.embedder).embedder, E5Embedder
    )
