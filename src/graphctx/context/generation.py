"""Answer generation around the packed context: no evidence, no model call.

``answer_with_citations`` decides ``insufficient_evidence`` itself when nothing was packed, so a
model is never asked to answer from nothing; otherwise it renders the messages, calls the model
once, parses the strict schema and resolves the citations. Contract failures raise
``AnswerContractError``; whether to regenerate is the caller's choice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from graphctx.context.answer import AnswerStatus, parse_answer
from graphctx.context.citations import ResolvedCitation, resolve_citations
from graphctx.context.evidence import PackableEvidence, PackResult
from graphctx.context.rendering import render_messages
from graphctx.contract import UnanswerableReason
from graphctx.llm.port import ChatMessage

__all__ = ["AnswerOutcome", "ModelCall", "answer_with_citations"]

ModelCall = Callable[[tuple[ChatMessage, ...]], Awaitable[str]]


@dataclass(frozen=True)
class AnswerOutcome:
    status: AnswerStatus
    answer: str
    citations: tuple[ResolvedCitation, ...]
    reason: UnanswerableReason | None = None
    model_called: bool = True


async def answer_with_citations(
    question: str, pack: PackResult[PackableEvidence], call: ModelCall
) -> AnswerOutcome:
    reason = pack.unanswerable_reason
    if reason is not None:
        return AnswerOutcome("insufficient_evidence", "", (), reason=reason, model_called=False)
    payload = parse_answer(await call(render_messages(question, pack)))
    citations = resolve_citations(payload, pack.source_map)
    return AnswerOutcome(payload.status, payload.answer, citations)
