"""The CLI as users run it: a real process, real files, exit codes and stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphctx.contract import ContextResponse, Freshness
from graphctx.demo.run import corpus_path, load_script


def graphctx(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "demo.sqlite"
    done = graphctx("--store", path, "ingest", corpus_path(), "--namespace", "nw")
    assert done.returncode == 0, done.stderr
    return path


def test_search_json_prints_exactly_a_context_response(store: Path) -> None:
    done = graphctx(
        "--store",
        store,
        "search",
        "which message broker for shipment events",
        "--namespace",
        "nw",
        "--principal",
        "sam",
        "--scope",
        "eng",
        "--json",
        "--max-tokens",
        "900",
    )
    assert done.returncode == 0, done.stderr
    response = ContextResponse.model_validate_json(done.stdout)
    assert response.answerable
    by_doc = {item.document_id: item.freshness for item in response.items}
    assert by_doc.get("adr-0003") in (None, Freshness.STALE)
    assert response.limits.used_tokens <= 900


def test_restricted_documents_stay_out_of_a_narrower_principals_bundle(store: Path) -> None:
    done = graphctx(
        "--store",
        store,
        "search",
        "payment gateway outage root cause",
        "--namespace",
        "nw",
        "--principal",
        "sam",
        "--scope",
        "eng",
        "--json",
    )
    response = ContextResponse.model_validate_json(done.stdout)
    assert not any(item.source_uri.count("/incidents/") for item in response.items)
    assert not any(item.document_id.startswith("inc-") for item in response.items)


def test_reingesting_reports_every_document_unchanged(store: Path) -> None:
    done = graphctx("--store", store, "ingest", corpus_path(), "--namespace", "nw", "--json")
    report = json.loads(done.stdout)
    assert {d["outcome"] for d in report["documents"]} == {"unchanged"}
    assert report["chunks_written"] == 0


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--max-tokens", "0"], "invalid_request"),
        (["--timeout-ms", "-1"], "invalid_request"),
        (["--freshness-required-at", "yesterday"], "invalid_request"),
        (["--namespace", "../x"], "invalid_request"),
    ],
)
def test_bad_search_input_is_a_one_line_typed_error(
    store: Path, args: list[str], code: str
) -> None:
    done = graphctx("--store", store, "search", "q", "--principal", "p", "--scope", "eng", *args)
    assert done.returncode == 2
    assert done.stderr.startswith(f"graphctx: error [{code}]")
    assert "Traceback" not in done.stderr


def test_an_unknown_mode_is_rejected_by_the_parser(store: Path) -> None:
    done = graphctx(
        "--store", store, "search", "q", "--principal", "p", "--scope", "e", "--mode", "telepathy"
    )
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


def test_a_file_that_is_not_a_store_is_reported_as_corrupt(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_bytes(b"this is not sqlite at all" * 100)
    done = graphctx("--store", bogus, "documents", "--scope", "eng")
    assert (done.returncode, done.stderr.split("]")[0]) == (3, "graphctx: error [store_corrupt")


def test_a_store_in_a_missing_directory_is_a_missing_store(tmp_path: Path) -> None:
    done = graphctx("--store", tmp_path / "nope" / "x.sqlite", "documents", "--scope", "eng")
    assert (done.returncode, done.stderr.split("]")[0]) == (3, "graphctx: error [store_missing")


def test_a_scope_ceiling_rejects_documents_naming_other_scopes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "own.md").write_text("---\nscopes: [hr]\n---\nSalary bands.\n", "utf-8")
    (docs / "plain.md").write_text("Deploy with the release train.\n", "utf-8")
    store = tmp_path / "s.sqlite"
    done = graphctx(
        "--store", store, "ingest", docs, "--scope", "eng", "--scope-ceiling", "eng", "--json"
    )
    report = json.loads(done.stdout)
    assert done.returncode == 2  # a rejected document is bad input (was 1 before issue 15)
    assert [(e["origin"].endswith("own.md"), e["code"]) for e in report["errors"]] == [
        (True, "scope_not_granted")
    ]
    listed = graphctx("--store", store, "documents", "--scope", "eng", "--scope", "hr")
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["plain.md"]


def test_schema_prints_both_json_schemas() -> None:
    done = graphctx("schema")
    schemas = json.loads(done.stdout)
    assert set(schemas) == {"ContextRequest", "ContextResponse"}


def test_demo_json_prints_a_valid_bundle_for_every_question_and_principal() -> None:
    # what each bundle must contain is checked per note in test_demo_notes.py
    done = graphctx("demo", "--json")
    assert done.returncode == 0, done.stderr
    bundles = json.loads(done.stdout)
    asked = [(q.query, p) for q in load_script().questions for p in q.principals]
    assert [(b["query"], b["principal"]) for b in bundles] == asked
    for bundle in bundles:
        ContextResponse.model_validate_json(json.dumps(bundle["response"]))


def record(number: str, title: str, text: str, *structure: str) -> dict[str, str]:
    levels = dict(zip(("chapter", "section"), structure, strict=False))
    return {"id": f"a{number}", "law": "시험법", "article_no": f"제{number}조", "title": title,
            "text": text, **levels}  # fmt: skip


UNFAIR = ("제2장 해고", "제1절 해고의 제한")
REMEDY = ("제2장 해고", "제2절 구제")
STATUTE_RECORDS = [
    record("1", "목적", "이 법은 근로자의 생활을 보장한다.", "제1장 총칙"),
    record("2", "적용 범위", "이 법은 모든 사업에 적용한다.", "제1장 총칙"),
    record(
        "23",
        "해고 등의 제한",
        '정당한 이유 없는 해고(이하 "부당해고등"이라 한다)는 못한다.',
        *UNFAIR,
    ),
    record("24", "경영상 해고", "제23조에도 불구하고 해고할 수 있다.", *UNFAIR),
    record("25", "우선 재고용", "제24조에 따라 해고된 사람을 고용한다.", *UNFAIR),
    record(
        "28", "구제신청", "부당해고등을 당한 근로자는 노동위원회에 구제를 신청할 수 있다.", *REMEDY
    ),
    record("29", "조사", "노동위원회는 신청을 받으면 조사하여야 한다.", *REMEDY),
    record("30", "구제명령", "부당해고등이 성립하면 구제명령을 하여야 한다.", *REMEDY),
    *[{"id": f"n{k}", "title": f"참고 {k}", "text": f"참고 자료 {k}번입니다."} for k in range(7)],
]


def test_ingest_extract_graph_forms_offline_concepts_that_search_walks(tmp_path: Path) -> None:
    corpus = tmp_path / "law.jsonl"
    corpus.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in STATUTE_RECORDS), encoding="utf-8"
    )
    store = tmp_path / "law.sqlite"
    done = graphctx(
        "--store", store, "ingest", corpus, "--namespace", "law", "--scope", "law",
        "--extract-graph", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    graph = json.loads(done.stdout)["graph"]
    shape = graph["concept_shape"]
    assert (shape["items"], shape["low"], shape["high"]) == (15, 1, 3)
    assert graph["concepts"] == shape["concepts"] == 3
    assert shape["by_source"] == {"references": 1, "structure": 1, "term": 1}  # 제1절 cites itself
    # covered: 제1조-제2조 (총칙), 제23조-제25조 (citations), 제28조 + 제30조 (부당해고등)
    assert graph["fallback_rate"] == shape["fallback_rate"] == round(1 - 7 / 15, 4)
    plain = graphctx(
        "--store", store, "ingest", corpus, "--namespace", "other", "--scope", "law",
        "--extract-graph",
    )  # fmt: skip
    assert "fallback rate 53.3%" in plain.stdout
    found = graphctx(
        "--store", store, "search", "부당해고 구제를 신청", "--namespace", "law",
        "--principal", "p", "--scope", "law", "--mode", "graph", "--json",
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    response = ContextResponse.model_validate_json(found.stdout)
    via_concept = {
        item.document_id
        for item in response.items
        if any(step.kind.value == "Concept" for step in item.provenance_path)
    }
    assert "a23" in via_concept  # the definer of 부당해고등, reached from 제28조 / 제30조


@pytest.mark.parametrize(
    "command",
    [
        ["search", "q", "--principal", "p", "--scope", "eng"],
        ["documents", "--scope", "eng"],
        ["delete", "doc-1"],
    ],
)
def test_a_read_command_never_creates_a_store(tmp_path: Path, command: list[str]) -> None:
    mistyped = tmp_path / "compnay.sqlite"
    done = graphctx("--store", mistyped, *command)
    assert (done.returncode, done.stderr.split("]")[0]) == (3, "graphctx: error [store_missing")
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_ingest_errors_are_one_line_each_on_stderr_and_exit_2(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bad.md").write_text("---\nscopes: [\n---\nbroken front matter\n", "utf-8")
    (docs / "empty.txt").write_text("   \n", "utf-8")
    (docs / "good.md").write_text("Deploy with the release train.\n", "utf-8")
    done = graphctx("--store", tmp_path / "s.sqlite", "ingest", docs, "--scope", "eng")
    assert done.returncode == 2
    errors = done.stderr.splitlines()
    assert [line.split("]")[0] for line in errors] == [
        "graphctx: error [front_matter_invalid",
        "graphctx: error [empty_document",
    ]
    assert all(line.split("]: ", 1)[1].startswith(str(docs)) for line in errors)
    assert "graphctx: error" not in done.stdout
    assert done.stdout.startswith("namespace default: 1 documents (1 added)")


def test_deleting_a_missing_document_is_a_one_line_not_found(store: Path) -> None:
    done = graphctx("--store", store, "delete", "no-such-doc", "--namespace", "nw")
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr == "graphctx: error [not_found]: no document 'no-such-doc' in namespace 'nw'\n"
    )
