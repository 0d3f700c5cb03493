"""The unanswerable evaluation counts what the provider really answers, on a corpus it writes.

The harness hides a question's gold documents by scope. Its counts are checked against an
independent store into which the gold documents were never ingested at all, asked through the
same provider, so a harness that miscounts, or hides the wrong documents, fails here whatever
today's retrieval decides about ``answerable``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from graphctx.cli.main import main
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, ContextResponse
from graphctx.embed import Embedder
from graphctx.eval.datasets import EvalDocument, EvalQuestion, EvalSet
from graphctx.eval.quality import DEFAULT_KS, score
from graphctx.eval.unanswerable import (
    MAX_TOKENS,
    MODES,
    TIMEOUT_MS,
    OffTopicQuestion,
    UnanswerableResult,
    evaluate_unanswerable,
)
from graphctx.ingest.extract import OfflineExtractor
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import StaticGrants
from graphctx.store.sqlite.store import SqliteGraphStore

DOCUMENTS = (
    EvalDocument("tea", "Green tea", "Green tea\nBrew green tea at 80 degrees for two minutes."),
    EvalDocument("coffee", "Espresso", "Espresso\nAn espresso shot takes 25 seconds to pull."),
    EvalDocument("bread", "Sourdough", "Sourdough\nBake sourdough at 230 degrees in a pot."),
    EvalDocument("rice", "Rice", "Rice\nRinse rice three times before cooking it."),
)
QUESTIONS = (
    EvalQuestion("q-tea", "How hot should the water be to brew green tea?", ("tea",)),
    EvalQuestion("q-bread", "At what temperature do I bake sourdough?", ("bread",)),
    # no word in common with the corpus: today's vector search still finds a nearest chunk
    EvalQuestion("q-none", "Qu'est-ce que la photosynthèse végétale ?", ("rice",)),
    # every document is gold: with them hidden nothing is visible, so not even today's code
    # answers, and a harness that hid nothing (or the wrong documents) would count it answered
    EvalQuestion("q-all", "What do the kitchen notes say?", ("tea", "coffee", "bread", "rice")),
)
OFF_TOPIC = (
    OffTopicQuestion("en", "en", "Which moon of Jupiter has a subsurface ocean?"),
    OffTopicQuestion("ko", "ko", "야구에서 인필드 플라이 규칙이란?"),
)
SMALL_SET = EvalSet("small", "four cooking notes", DOCUMENTS, QUESTIONS)


async def _ask_without(
    embedder: Embedder, tmp: Path, removed: set[str], queries: list[str]
) -> dict[str, list[ContextResponse]]:
    """Per mode, each query's bundle from a store that never held the ``removed`` documents."""
    provider = ContextProvider(
        SqliteGraphStore(tmp / f"without-{'-'.join(sorted(removed)) or 'nothing'}.sqlite"),
        embedder,
        default_token_counter(),
        StaticGrants({"reader": frozenset({"all"})}),
    )
    await provider.aopen()
    try:
        sources = [
            SourceDocument(
                origin=f"doc#{n}",
                media_type=MediaType.TEXT,
                text=doc.text,
                metadata=DocumentMetadata(
                    document_id=doc.document_id, title=doc.title, scopes=("all",)
                ),
            )
            for n, doc in enumerate(DOCUMENTS)
            if doc.document_id not in removed
        ]
        await ingest_sources(
            provider.store,
            embedder,
            sources,
            Path("."),
            IngestDefaults(namespace="direct"),
            extractor=OfflineExtractor(),
        )
        answers: dict[str, list[ContextResponse]] = {}
        for mode in MODES:
            for query in queries:
                response = await provider.aretrieve(
                    ContextRequest(
                        query=query,
                        principal_id="reader",
                        allowed_scopes=["all"],
                        namespace="direct",
                        retrieval_mode=mode,
                        max_tokens=MAX_TOKENS,
                        timeout_ms=TIMEOUT_MS,
                    )
                )
                answers.setdefault(mode.value, []).append(response)
        return answers
    finally:
        await provider.aclose()


@pytest.fixture(scope="module")
def result(embedder: Embedder) -> UnanswerableResult:
    return asyncio.run(evaluate_unanswerable(SMALL_SET, embedder, OFF_TOPIC))


def test_gold_removed_count_equals_asking_a_store_without_the_gold_documents(
    result: UnanswerableResult, embedder: Embedder, tmp_path: Path
) -> None:
    expected = {mode.value: 0 for mode in MODES}
    for question in QUESTIONS:
        direct = asyncio.run(
            _ask_without(embedder, tmp_path, set(question.gold), [question.question])
        )
        for mode, responses in direct.items():
            expected[mode] += sum(r.answerable for r in responses)
    assert {m: o.gold_removed_answerable for m, o in result.modes.items()} == expected
    assert all(count < len(QUESTIONS) for count in expected.values())  # q-all is refused
    for outcome in result.modes.values():
        refused = len(QUESTIONS) + len(OFF_TOPIC) - outcome.gold_removed_answerable
        assert sum(outcome.reasons.values()) == refused - outcome.off_topic_answerable
        assert outcome.reasons.get("no_evidence", 0) >= 1
        assert outcome.gold_leaked == 0


def test_off_topic_count_equals_asking_the_whole_store_directly(
    result: UnanswerableResult, embedder: Embedder, tmp_path: Path
) -> None:
    direct = asyncio.run(_ask_without(embedder, tmp_path, set(), [q.question for q in OFF_TOPIC]))
    assert {m: o.off_topic_answerable for m, o in result.modes.items()} == {
        mode: sum(r.answerable for r in responses) for mode, responses in direct.items()
    }


def test_answerable_questions_are_scored_on_the_whole_store(
    result: UnanswerableResult, embedder: Embedder, tmp_path: Path
) -> None:
    assert (result.documents, result.questions, result.off_topic) == (4, 4, 2)
    assert result.collateral_hidden == 0
    direct = asyncio.run(_ask_without(embedder, tmp_path, set(), [q.question for q in QUESTIONS]))
    golds = [q.gold for q in QUESTIONS]
    for mode, responses in direct.items():
        outcome = result.modes[mode]
        rankings = [list(dict.fromkeys(i.document_id for i in r.items)) for r in responses]
        assert outcome.recall == score(rankings, golds, DEFAULT_KS).recall
        assert outcome.answered == sum(r.answerable for r in responses)
        assert outcome.timed_out == 0
    # tea and bread are plain lexical matches: found at the top in every mode
    assert all(o.recall[2] >= 0.5 for o in result.modes.values())


def test_deleting_the_gold_documents_agrees_with_hiding_them(result: UnanswerableResult) -> None:
    asked = len(QUESTIONS) * len(MODES)
    assert result.deletion_check["asked"] == asked
    assert result.deletion_check["same_answerable"] == asked


def test_graphctx_eval_writes_the_unanswerable_table_unless_skipped(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    questions = tmp_path / "questions.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": d.document_id, "title": d.title, "text": d.text.split("\n")[1]})
            + "\n"
            for d in DOCUMENTS
        )
    )
    questions.write_text(
        "".join(
            json.dumps({"id": q.question_id, "question": q.question, "gold": list(q.gold)}) + "\n"
            for q in QUESTIONS
        )
    )
    base = ["eval", "--corpus", str(corpus), "--questions", str(questions)]
    assert main([*base, "--out", str(tmp_path / "with")]) == 0
    report = json.loads((tmp_path / "with" / "eval.json").read_text())
    (row,) = report["unanswerable"]
    assert (row["name"], row["questions"], set(row["modes"])) == (
        "questions",
        len(QUESTIONS),
        {m.value for m in MODES},
    )
    assert "## Unanswerable" in (tmp_path / "with" / "eval.md").read_text()
    assert main([*base, "--out", str(tmp_path / "without"), "--skip-unanswerable"]) == 0
    assert "unanswerable" not in json.loads((tmp_path / "without" / "eval.json").read_text())
    assert "## Unanswerable" not in (tmp_path / "without" / "eval.md").read_text()
