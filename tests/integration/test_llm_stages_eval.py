"""``graphctx eval`` gains a column per configured LLM stage, driven by recorded answers."""

from __future__ import annotations

import asyncio
import json

from llm_stages_world import DOCS, RecordedChat, chat_for, stage_of

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.eval.datasets import EvalDocument, EvalQuestion, EvalSet
from graphctx.eval.llm_columns import LLM_COLUMNS
from graphctx.eval.quality import METHODS, evaluate_set
from graphctx.eval.report import markdown_table
from graphctx.retrieve.assist import LlmStages, LlmStagesConfig
from graphctx.testing.fake_chat import ChatBody

EVAL_SET = EvalSet(
    "labour",
    "a few labour rules",
    tuple(EvalDocument(doc_id, doc_id, text) for doc_id, (_, text) in DOCS.items()),
    (
        EvalQuestion("q1", "I was sacked by my employer, what now?", ("remedy", "severance")),
        EvalQuestion(
            "q2",
            "How much is overtime paid and how many days of annual leave do I get?",
            ("overtime", "annual-leave"),
        ),
    ),
)


def answer(body: ChatBody) -> str:
    stage = stage_of(body)
    if stage == "rewrite":
        return json.dumps({"rewrites": ["severance pay per year of service"]})
    if stage == "route":
        return json.dumps({"routes": ["vector"]})
    shown = body["messages"][1]["content"].count("<source id=")
    return json.dumps({"order": [f"C{i}" for i in range(shown, 0, -1)]})  # reversed


def test_eval_reports_one_column_per_llm_stage_and_says_what_it_demonstrates(
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    with RecordedChat(answer) as server:
        stages = LlmStages(LlmStagesConfig(chat_for(server), rewrite=True, route=True, rerank=True))
        with_stages = asyncio.run(evaluate_set(EVAL_SET, embedder, (2, 5), stages))
    without = asyncio.run(evaluate_set(EVAL_SET, embedder, (2, 5)))
    plain = [m for m in without.methods if "+" not in m or m == "hybrid+graph"]
    assert plain == list(METHODS)
    for method in without.methods:  # the existing columns are untouched by the stages
        assert with_stages.methods[method] == without.methods[method]
    assert set(with_stages.methods) - set(without.methods) == set(LLM_COLUMNS.values())
    tallies = with_stages.llm_stages
    assert (tallies["rewrite"].asked, tallies["rewrite"].applied) == (2, 2)
    assert (tallies["route"].asked, tallies["route"].applied) == (2, 2)
    assert (tallies["rerank"].asked, tallies["rerank"].applied) == (1, 1)  # q2 only
    assert tallies["rerank"].by_status == {"skipped": 1, "ok": 1}
    # reversing the top of q2's ranking moves its gold down: the column shows the stage acted
    assert with_stages.methods["hybrid+rerank"].mrr < with_stages.methods["hybrid"].mrr
    table = markdown_table([with_stages])
    assert "| hybrid+rerank |" in table
    assert "demonstrate the mechanism, not a model's quality" in table
