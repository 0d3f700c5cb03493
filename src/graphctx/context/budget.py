"""The evidence budget, written down as a formula and fixed before packing.

    evidence = context_limit
             - system/policy - conversation and question - output reserve
             - tool/schema overhead - context wrapper - safety margin

The output reserve is subtracted first-class, before any evidence is placed: filling the window
and then shrinking the answer is how answers and JSON get cut off. The request's ``max_tokens``
caps the result. Every term is a token count from the real tokenizer (``plan_budget`` measures
them); the packer charges each block for its own source tags, so the wrapper term is only the
fixed framing around the blocks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from graphctx.context.answer import answer_json_schema
from graphctx.context.rendering import SYSTEM_INSTRUCTION, wrapper_tokens
from graphctx.context.tokens import TokenCounter
from graphctx.errors import BudgetTooSmallError

__all__ = ["DEFAULT_SAFETY_MARGIN_RATIO", "BudgetPlan", "compute_evidence_budget", "plan_budget"]

DEFAULT_SAFETY_MARGIN_RATIO = 0.05


@dataclass(frozen=True)
class BudgetPlan:
    """Every term of the budget formula, in tokens of the target model."""

    context_limit_tokens: int
    system_tokens: int
    conversation_tokens: int
    output_reserve_tokens: int
    tool_schema_tokens: int = 0
    wrapper_tokens: int = 0
    safety_margin_tokens: int = 0

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{item.name} must be a non-negative int, got {value!r}")
        if self.context_limit_tokens == 0:
            raise ValueError("context_limit_tokens must be positive")

    @property
    def reserved_tokens(self) -> int:
        return (
            self.system_tokens
            + self.conversation_tokens
            + self.output_reserve_tokens
            + self.tool_schema_tokens
            + self.wrapper_tokens
            + self.safety_margin_tokens
        )


def compute_evidence_budget(plan: BudgetPlan, *, max_tokens: int | None = None) -> int:
    """Tokens left for evidence blocks; raises ``BudgetTooSmallError`` when none are left."""
    available = plan.context_limit_tokens - plan.reserved_tokens
    if available <= 0:
        raise BudgetTooSmallError(
            f"no room for evidence: context limit {plan.context_limit_tokens} tokens, "
            f"{plan.reserved_tokens} reserved (system {plan.system_tokens}, conversation "
            f"{plan.conversation_tokens}, output {plan.output_reserve_tokens}, tools/schema "
            f"{plan.tool_schema_tokens}, wrapper {plan.wrapper_tokens}, safety "
            f"{plan.safety_margin_tokens})"
        )
    if max_tokens is not None:
        if max_tokens <= 0:
            raise BudgetTooSmallError(f"max_tokens {max_tokens} leaves no room for evidence")
        available = min(available, max_tokens)
    return available


def plan_budget(
    counter: TokenCounter,
    *,
    context_limit_tokens: int,
    output_reserve_tokens: int,
    question: str,
    conversation: Sequence[str] = (),
    system: str = SYSTEM_INSTRUCTION,
    include_answer_schema: bool = True,
    extra_tool_tokens: int = 0,
    safety_margin_tokens: int | None = None,
) -> BudgetPlan:
    """Measure every term with ``counter``. The default safety margin is 5% of the limit."""
    schema_tokens = extra_tool_tokens
    if include_answer_schema:
        schema_tokens += counter.count(json.dumps(answer_json_schema(), sort_keys=True))
    margin = (
        math.ceil(context_limit_tokens * DEFAULT_SAFETY_MARGIN_RATIO)
        if safety_margin_tokens is None
        else safety_margin_tokens
    )
    return BudgetPlan(
        context_limit_tokens=context_limit_tokens,
        system_tokens=counter.count(system),
        conversation_tokens=sum(counter.count(turn) for turn in (*conversation, question)),
        output_reserve_tokens=output_reserve_tokens,
        tool_schema_tokens=schema_tokens,
        wrapper_tokens=wrapper_tokens(counter),
        safety_margin_tokens=margin,
    )
