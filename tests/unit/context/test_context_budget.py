from __future__ import annotations

import json

import pytest
from context_strategies import KOREAN_LINES, make_evidence

from graphctx.context import (
    SYSTEM_INSTRUCTION,
    BudgetPlan,
    answer_json_schema,
    compute_evidence_budget,
    default_token_counter,
    pack_to_budget,
    plan_budget,
    wrapper_tokens,
)
from graphctx.errors import BudgetTooSmallError

COUNTER = default_token_counter()


def test_evidence_budget_is_the_limit_minus_every_reserved_term() -> None:
    plan = BudgetPlan(
        context_limit_tokens=8_000,
        system_tokens=300,
        conversation_tokens=500,
        output_reserve_tokens=1_000,
        tool_schema_tokens=200,
        wrapper_tokens=20,
        safety_margin_tokens=400,
    )
    assert compute_evidence_budget(plan) == 8_000 - 300 - 500 - 1_000 - 200 - 20 - 400


def test_request_max_tokens_caps_the_evidence_budget() -> None:
    plan = BudgetPlan(8_000, 100, 100, 1_000)
    assert compute_evidence_budget(plan, max_tokens=2_000) == 2_000
    assert compute_evidence_budget(plan, max_tokens=50_000) == 6_800


@pytest.mark.parametrize("max_tokens", [None, 10])
def test_no_room_left_is_a_typed_error(max_tokens: int | None) -> None:
    plan = BudgetPlan(4_000, 500, 1_500, 2_000)
    with pytest.raises(BudgetTooSmallError) as caught:
        compute_evidence_budget(plan, max_tokens=max_tokens)
    assert caught.value.code == "budget_too_small"


def test_negative_terms_are_rejected() -> None:
    with pytest.raises(ValueError, match="output_reserve_tokens"):
        BudgetPlan(4_000, 0, 0, -1)


def test_plan_measures_every_term_with_the_real_tokenizer() -> None:
    question = "부당해고 구제신청 기간은?"
    plan = plan_budget(
        COUNTER,
        context_limit_tokens=16_000,
        output_reserve_tokens=1_500,
        question=question,
        conversation=["이전 질문", "이전 답변"],
    )
    assert plan.system_tokens == COUNTER.count(SYSTEM_INSTRUCTION)
    assert plan.conversation_tokens == sum(
        COUNTER.count(t) for t in ["이전 질문", "이전 답변", question]
    )
    assert plan.tool_schema_tokens == COUNTER.count(
        json.dumps(answer_json_schema(), sort_keys=True)
    )
    assert plan.wrapper_tokens == wrapper_tokens(COUNTER) > 0
    assert plan.safety_margin_tokens == 800


def test_output_reserve_is_taken_before_packing_so_evidence_cannot_eat_the_answer() -> None:
    """Seed failure 2: filling the window first leaves no room for the answer and its JSON."""
    evidence = [
        make_evidence(f"e{i}", line, document_id=f"d{i}", rank=i)
        for i, line in enumerate(KOREAN_LINES)
    ]
    plan = plan_budget(
        COUNTER, context_limit_tokens=1_500, output_reserve_tokens=500, question="해고 예고 기간은?"
    )
    result = pack_to_budget(evidence, compute_evidence_budget(plan), COUNTER)
    assert result.blocks
    prompt_tokens = plan.reserved_tokens - plan.output_reserve_tokens + result.used_tokens
    assert prompt_tokens + plan.output_reserve_tokens <= plan.context_limit_tokens
