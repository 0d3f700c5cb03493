"""Evaluation corpora keep every field of a record as document metadata."""

from __future__ import annotations

import json
from pathlib import Path

from graphctx.eval.datasets import load_dataset, load_files


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_every_extra_corpus_field_becomes_metadata_text(tmp_path: Path) -> None:
    corpus = _jsonl(
        tmp_path / "corpus.jsonl",
        [
            {
                "id": 7,
                "title": "해고 등의 제한",
                "text": "사용자는 정당한 이유 없이 해고하지 못한다.",
                "law": "근로기준법",
                "article_no": "제23조",
                "section": None,
                "paragraphs": 2,
                "deleted": False,
                "cites": ["제26조", "제28조"],
                "source": {"law_id": "001872"},
            }
        ],
    )
    questions = _jsonl(tmp_path / "q.jsonl", [{"id": "q", "question": "해고?", "gold": [7]}])
    (document,) = load_files("mine", corpus, questions).documents
    assert (document.document_id, document.title) == ("7", "해고 등의 제한")
    assert document.text == "해고 등의 제한\n사용자는 정당한 이유 없이 해고하지 못한다."
    assert document.metadata == {
        "law": "근로기준법",
        "article_no": "제23조",
        "paragraphs": "2",
        "deleted": "false",
        "cites": '["제26조", "제28조"]',
        "source": '{"law_id": "001872"}',
    }


def test_a_corpus_of_id_title_text_has_no_metadata(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl", [{"id": "p1", "title": None, "text": "Some passage."}])
    questions = _jsonl(tmp_path / "q.jsonl", [{"id": "q", "question": "?", "gold": ["p1"]}])
    (document,) = load_files("mine", corpus, questions).documents
    assert (document.title, document.text, document.metadata) == (None, "Some passage.", {})


def test_the_built_in_statute_set_keeps_each_articles_fields(tmp_path: Path) -> None:
    """The statute loader over a corpus in the shared folder's format, written here."""
    rows = [
        {"article_no": "제23조", "title": "해고 등의 제한", "text": "이유 없이 해고하지 못한다.",
         "chapter": "제2장 근로계약", "effective_date": "2027-01-01", "law_id": "001872",
         "deleted": False, "section": None},
        {"article_no": "제24조", "title": "삭제", "text": "", "deleted": True},
    ]  # fmt: skip
    corpus = tmp_path / "kr-law" / "근로기준법.jsonl"
    corpus.parent.mkdir()
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    documents = {d.document_id: d for d in load_dataset("kr-law", tmp_path, limit=0).documents}
    assert list(documents) == ["근로기준법-제23조"]  # the deleted stub is left out
    assert documents["근로기준법-제23조"].metadata == {
        "law": "근로기준법",
        "article_no": "제23조",
        "chapter": "제2장 근로계약",
        "effective_date": "2027-01-01",
        "law_id": "001872",
        "deleted": "false",
    }
