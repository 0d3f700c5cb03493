"""Question sets with gold document ids, read from the shared data folder (never copied).

- ``multihop/<name>``: ``corpus.jsonl`` ({id, title, text}) and ``questions.jsonl``
  ({id, question, supporting_ids}) as described in that folder's README; gold = passage ids.
- ``kr-law``: the Korean Labour Standards Act (``kr-law/근로기준법.jsonl``) with the questions
  committed in ``graphctx/eval/fixtures/kr-labour-standards-act.yaml``; gold = article numbers.
- any pair of files in the same two formats (``gold`` may replace ``supporting_ids``).

Every other field of a corpus record (a statute's ``law``, ``article_no``, ``chapter``, ...)
is kept as document metadata, written as ingest writes a JSONL record's fields (scalars as
text, lists and objects as JSON, nulls dropped), so the offline extractor can resolve
references and group by headings exactly as it does for ``graphctx ingest``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from graphctx.errors import ConfigurationError
from graphctx.ingest.frontmatter import metadata_text
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument

__all__ = [
    "DEFAULT_DATASETS",
    "EvalDocument",
    "EvalQuestion",
    "EvalSet",
    "default_data_dir",
    "load_dataset",
    "load_files",
    "record_metadata",
    "source_documents",
]

DEFAULT_DATASETS = (
    "multihop/2wikimultihopqa",
    "multihop/musique_hipporag_train100",
    "multihop/hotpotqa_hipporag_train100",
    "kr-law",
)
KR_LAW_FIXTURE = "kr-labour-standards-act.yaml"


@dataclass(frozen=True)
class EvalDocument:
    document_id: str
    title: str | None
    text: str
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalQuestion:
    question_id: str
    question: str
    gold: tuple[str, ...]


@dataclass(frozen=True)
class EvalSet:
    name: str
    description: str
    documents: tuple[EvalDocument, ...]
    questions: tuple[EvalQuestion, ...]


def default_data_dir() -> Path:
    return Path(os.environ.get("GRAPHCTX_DATA", "../shared/data"))


def _missing(path: Path) -> ConfigurationError:
    return ConfigurationError(
        f"evaluation data not found: {path.resolve()} (point --data or GRAPHCTX_DATA at the"
        " shared data folder; it is read in place, never copied)"
    )


def _jsonl(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        raise _missing(path)
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def record_metadata(
    row: dict[str, object], origin: Path, skip: frozenset[str] = frozenset({"id", "title", "text"})
) -> dict[str, str]:
    """Every field of a corpus record but ``skip``, as document metadata text."""
    metadata: dict[str, str] = {}
    for key, value in row.items():
        if key in skip or value is None:
            continue
        try:
            metadata[key] = metadata_text(value)
        except ValueError as exc:
            raise ConfigurationError(f"{origin}: record {row.get('id')}: {key} {exc}") from exc
    return metadata


def load_files(name: str, corpus: Path, questions: Path, limit: int | None = None) -> EvalSet:
    """A corpus JSONL ({id, title?, text, ...}) and a questions JSONL ({id, question, gold})."""
    documents = tuple(
        EvalDocument(
            str(row["id"]),
            None if row.get("title") is None else str(row["title"]),
            f"{row['title']}\n{row['text']}" if row.get("title") else str(row["text"]),
            record_metadata(row, corpus),
        )
        for row in _jsonl(corpus)
    )
    asked = []
    for row in _jsonl(questions)[:limit]:
        gold = row.get("supporting_ids", row.get("gold"))
        if not isinstance(gold, list) or not gold:
            raise ConfigurationError(f"{questions}: question {row.get('id')} has no gold ids")
        asked.append(EvalQuestion(str(row["id"]), str(row["question"]), tuple(map(str, gold))))
    return EvalSet(name, f"{corpus.parent.name}: {corpus.name}", documents, tuple(asked))


def _kr_law(data: Path, limit: int | None) -> EvalSet:
    fixture = yaml.safe_load(
        (resources.files("graphctx.eval") / "fixtures" / KR_LAW_FIXTURE).read_text("utf-8")
    )
    law = str(fixture["law"])
    corpus = data / str(fixture["corpus"])
    documents = tuple(
        EvalDocument(
            f"{law}-{row['article_no']}",
            str(row["title"]),
            f"{law} {row['article_no']}({row['title']})\n{row['text']}",
            {**record_metadata(row, corpus, frozenset({"title", "text"})), "law": law},
        )
        for row in _jsonl(corpus)
        if not row.get("deleted")
    )
    known = {d.document_id for d in documents}
    questions = []
    for q in fixture["questions"][:limit]:
        gold = tuple(f"{law}-{article}" for article in q["gold"])
        unknown = [g for g in gold if g not in known]
        if unknown:
            raise ConfigurationError(f"{KR_LAW_FIXTURE}: {q['id']} names unknown {unknown}")
        questions.append(EvalQuestion(str(q["id"]), str(q["question"]), gold))
    return EvalSet(
        "kr-law",
        f"{law}: {len(documents)} articles, {len(questions)} multi-article questions",
        documents,
        tuple(questions),
    )


def load_dataset(name: str, data: Path, limit: int | None = None) -> EvalSet:
    """One of :data:`DEFAULT_DATASETS` (``multihop/<folder>`` or ``kr-law``)."""
    if name == "kr-law":
        return _kr_law(data, limit)
    if name.startswith("multihop/"):
        folder = data / name
        loaded = load_files(name, folder / "corpus.jsonl", folder / "questions.jsonl", limit)
        return EvalSet(
            name,
            f"{folder.name}: {len(loaded.documents)} passages, {len(loaded.questions)} questions",
            loaded.documents,
            loaded.questions,
        )
    raise ConfigurationError(f"unknown dataset {name!r}; known: {', '.join(DEFAULT_DATASETS)}")


def source_documents(
    eval_set: EvalSet, scopes_of: Callable[[str], Iterable[str]]
) -> list[SourceDocument]:
    """The set's documents as ingest sources, each with the scopes ``scopes_of`` its id."""
    return [
        SourceDocument(
            origin=f"{eval_set.name}#{n}",
            media_type=MediaType.TEXT,
            text=doc.text,
            metadata=DocumentMetadata(
                document_id=doc.document_id,
                title=doc.title,
                scopes=tuple(sorted(scopes_of(doc.document_id))),
                extra=doc.metadata,
            ),
        )
        for n, doc in enumerate(eval_set.documents)
    ]
