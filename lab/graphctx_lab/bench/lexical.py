"""``graphctx bench lexical``: which full-text analysis to index with, measured on real data.

Korean: every article of the two statutes in ``kr-law`` is indexed *without* its title; the
title (e.g. "해고 등의 제한") is the query and the article is the answer. English: the
2WikiMultihopQA questions against their corpus; a hit is any supporting passage.
Each analyser builds a real FTS5 table in memory and ranks with BM25, as the store does.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graphctx.errors import ConfigurationError
from graphctx.store.sqlite.fts5_query import match_expression
from graphctx.text.lexical import index_terms

TOP_K = 10


@dataclass(frozen=True)
class Analyser:
    name: str
    tokenize: str  # the FTS5 tokenizer clause
    prepare: Callable[[str], str]  # text -> stored column value
    query: Callable[[str], str | None]  # query -> MATCH expression


def _quoted_or(terms: list[str]) -> str | None:
    unique = list(dict.fromkeys(t for t in terms if t))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in unique[:64]) or None


def _whitespace_terms(text: str) -> list[str]:
    return [w.strip(".,?!()[]「」'\"").lower() for w in text.split()]


def _trigram_query(text: str) -> str | None:
    return _quoted_or([w for w in _whitespace_terms(text) if len(w) >= 3])


ANALYSERS = (
    Analyser(
        "cjk-bigram+snowball (graphctx)",
        "unicode61 remove_diacritics 2",
        index_terms,
        match_expression,
    ),
    Analyser(
        "unicode61 words",
        "unicode61 remove_diacritics 2",
        lambda t: t,
        lambda q: _quoted_or(_whitespace_terms(q)),
    ),
    Analyser("trigram", "trigram", lambda t: t, _trigram_query),
)


@dataclass(frozen=True)
class Case:
    query: str
    gold: frozenset[int]


def _korean_cases(data: Path) -> tuple[list[str], list[Case]]:
    docs: list[str] = []
    cases: list[Case] = []
    for path in sorted(data.glob("kr-law/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("deleted") or not row["title"]:
                continue
            cases.append(Case(row["title"], frozenset({len(docs)})))
            docs.append(row["text"])
    return docs, cases


def _english_cases(data: Path) -> tuple[list[str], list[Case]]:
    folder = data / "multihop" / "2wikimultihopqa"
    ids: dict[str, int] = {}
    docs: list[str] = []
    for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ids[row["id"]] = len(docs)
        docs.append(f"{row['title']} {row['text']}")
    cases = []
    for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        cases.append(Case(row["question"], frozenset(ids[i] for i in row["supporting_ids"])))
    return docs, cases


def _evaluate(analyser: Analyser, docs: list[str], cases: list[Case]) -> dict[str, float]:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{analyser.tokenize}')")
    conn.executemany(
        "INSERT INTO t (rowid, x) VALUES (?, ?)",
        [(i, analyser.prepare(d)) for i, d in enumerate(docs)],
    )
    hits_at_1 = reciprocal = recall = 0.0
    started = time.perf_counter()
    for case in cases:
        expression = analyser.query(case.query)
        ranked = (
            []
            if expression is None
            else [
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?",
                    (expression, TOP_K),
                )
            ]
        )
        first = next((n for n, rowid in enumerate(ranked, 1) if rowid in case.gold), None)
        hits_at_1 += first == 1
        reciprocal += 0 if first is None else 1 / first
        recall += len(case.gold & set(ranked)) / len(case.gold)
    elapsed = time.perf_counter() - started
    n = len(cases)
    return {
        "top1": round(hits_at_1 / n, 3),
        f"mrr@{TOP_K}": round(reciprocal / n, 3),
        f"recall@{TOP_K}": round(recall / n, 3),
        "ms_per_query": round(elapsed / n * 1000, 2),
    }


def run_lexical_bench(out: Path, data: Path) -> int:
    if not (data / "kr-law").exists() or not (data / "multihop").exists():
        raise ConfigurationError(f"evaluation data not found under {data.resolve()}")
    results: dict[str, object] = {}
    for label, (docs, cases) in (
        ("korean_statute_titles", _korean_cases(data)),
        ("english_2wiki_questions", _english_cases(data)),
    ):
        results[label] = {
            "documents": len(docs),
            "queries": len(cases),
            "analysers": {a.name: _evaluate(a, docs, cases) for a in ANALYSERS},
        }
    out.mkdir(parents=True, exist_ok=True)
    target = out / "lexical.json"
    target.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2, ensure_ascii=False))
    print(f"wrote {target}")
    return 0
