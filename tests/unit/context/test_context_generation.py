from __future__ import annotations

import asyncio
import json
import logging

import pytest
from context_strategies import KOREAN_LINES, make_evidence

from graphctx.context import (
    PROMPT_VERSION,
    AnswerContractError,
    AnswerOutcome,
    ChatMessage,
    Evidence,
    PackResult,
    build_context,
    build_manifest,
    default_token_counter,
    log_manifest,
    pack_to_budget,
    plan_budget,
    render_context,
)
from graphctx.context import answer_with_citations as answer_with_citations_async
from graphctx.contract import UnanswerableReason

COUNTER = default_token_counter()


class FakeModel:
    def __init__(self, reply: dict[str, object]) -> None:
        self.reply = reply
        self.calls: list[tuple[ChatMessage, ...]] = []

    async def __call__(self, messages: tuple[ChatMessage, ...]) -> str:
        self.calls.append(messages)
        return json.dumps(self.reply)


def answer_with_citations(
    question: str, pack: PackResult[Evidence], model: FakeModel
) -> AnswerOutcome:
    return asyncio.run(answer_with_citations_async(question, pack, model))


def evidence() -> list[Evidence]:
    return [make_evidence(f"e{i}", KOREAN_LINES[i], document_id=f"d{i}", rank=i) for i in range(3)]


@pytest.mark.parametrize(
    ("items", "budget", "reason"),
    [
        ([], 1_000, UnanswerableReason.NO_EVIDENCE),
        (evidence(), 5, UnanswerableReason.BUDGET_TOO_SMALL),
    ],
)
def test_zero_usable_evidence_answers_insufficient_without_calling_the_model(
    items: list[Evidence], budget: int, reason: UnanswerableReason
) -> None:
    """Seed failure 7: a model asked to answer from nothing answers fluently anyway."""
    model = FakeModel({"status": "answered", "answer": "지어낸 답", "citations": []})
    outcome = answer_with_citations("질문", pack_to_budget(items, budget, COUNTER), model)
    assert outcome == AnswerOutcome("insufficient_evidence", "", (), reason, model_called=False)
    assert model.calls == []


def test_an_answer_is_generated_once_and_its_citations_resolved() -> None:
    pack = pack_to_budget(evidence(), 1_000, COUNTER)
    model = FakeModel(
        {
            "status": "answered",
            "answer": "3개월 이내",
            "citations": [{"source_id": "S1", "claim": "기간"}],
        }
    )
    outcome = answer_with_citations("구제신청 기간은?", pack, model)
    assert (outcome.status, outcome.answer, outcome.reason) == ("answered", "3개월 이내", None)
    assert [c.evidence_id for c in outcome.citations] == ["e0"]
    assert len(model.calls) == 1
    assert model.calls[0][0].role == "system"
    assert KOREAN_LINES[0] in model.calls[0][1].content


def test_a_model_citing_an_unknown_id_is_a_contract_error() -> None:
    pack = pack_to_budget(evidence(), 1_000, COUNTER)
    model = FakeModel(
        {"status": "answered", "answer": "a", "citations": [{"source_id": "S7", "claim": "c"}]}
    )
    with pytest.raises(AnswerContractError) as caught:
        answer_with_citations("q", pack, model)
    assert caught.value.code == "unknown_citation_ids"


def test_manifest_records_budgets_and_every_block_without_text() -> None:
    plan = plan_budget(
        COUNTER, context_limit_tokens=8_000, output_reserve_tokens=1_000, question="q"
    )
    bundle = build_context("q", evidence(), COUNTER, budget_tokens=1_000, plan=plan)
    manifest = bundle.manifest.as_dict()
    assert manifest["prompt_version"] == PROMPT_VERSION
    assert (manifest["token_counter"], manifest["evidence_budget"]) == ("o200k_base", 1_000)
    assert manifest["used_tokens"] == bundle.pack.used_tokens
    assert manifest["rendered_context_tokens"] == COUNTER.count(render_context(bundle.pack.blocks))
    assert manifest["blocks"] == [
        {
            "source_id": b.citation_id,
            "evidence_id": b.evidence.evidence_id,
            "document_id": b.evidence.document_id,
            "document_version": "v1",
            "start_char": b.start_char,
            "end_char": b.end_char,
            "tokens": b.tokens,
            "truncated": False,
            "content_sha256": None,
        }
        for b in bundle.pack.blocks
    ]
    assert KOREAN_LINES[0] not in json.dumps(manifest, ensure_ascii=False)
    assert bundle.messages[1].content.count("<source id=") == 3


def test_manifest_text_hashes_are_optional_and_stable() -> None:
    pack = pack_to_budget(evidence(), 1_000, COUNTER)
    first = build_manifest(pack, include_text_hashes=True)
    assert first == build_manifest(pack, include_text_hashes=True)
    assert all(block.content_sha256 and len(block.content_sha256) == 64 for block in first.blocks)


def test_manifest_is_logged_with_the_trace_id(caplog: pytest.LogCaptureFixture) -> None:
    manifest = build_manifest(pack_to_budget(evidence(), 1_000, COUNTER))
    with caplog.at_level(logging.INFO, logger="graphctx.context"):
        log_manifest(manifest, trace_id="trace-123")
    [record] = caplog.records
    assert record.__dict__["trace_id"] == "trace-123"
    assert record.__dict__["context_manifest"] == manifest.as_dict()
