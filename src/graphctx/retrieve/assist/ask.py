"""One LLM stage call: cached, within its deadline slice, its reply parsed, all reported.

:func:`ask_model` renders nothing itself: it is given the messages, the prompt version and a
parser. A cached reply (same model, prompt version and messages) costs no HTTP call. The
call runs in a worker thread bounded by the stage's slice (:func:`run_stage`); a reply that
does not parse raises :class:`~graphctx.llm.port.ModelReplyError` with its own code
(``malformed_reply``, ``invented_ids``, ...), which like an endpoint failure (``ChatError``,
``chat_failed``) becomes a ``failed`` report. Only replies that parsed are cached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from graphctx.contract import ModelStageReport, StageReport, TokenUsage
from graphctx.errors import OperatorError
from graphctx.llm.port import ChatMessage, ChatReply, ModelChat, ModelReplyError
from graphctx.retrieve.assist.cache import ResponseCache, cache_key
from graphctx.retrieve.stages import Stage, run_stage

__all__ = ["Asked", "ask_model", "malformed"]

T = TypeVar("T")


def malformed(what: str, code: str = "malformed_reply") -> ModelReplyError:
    """The error a parser raises for a reply it cannot use."""
    return ModelReplyError(f"the model's reply is unusable: {what}", code=code)


@dataclass(frozen=True)
class Asked(Generic[T]):
    """The parsed reply (None unless the stage finished), its stage report, and what the
    manifest says about the model call (``applied`` is set by the caller)."""

    value: T | None
    report: StageReport
    model: ModelStageReport


async def ask_model(
    chat: ModelChat,
    cache: ResponseCache,
    stage: Stage,
    prompt_version: str,
    messages: Sequence[ChatMessage],
    deadline_at: float,
    parse: Callable[[str], T],
    count: Callable[[T], int],
) -> Asked[T]:
    key = cache_key(chat.model, prompt_version, messages)
    cached = cache.get(key)
    received: list[ChatReply] = []

    async def work() -> T:
        reply = cached if cached is not None else await asyncio.to_thread(chat.reply, messages)
        received.append(reply)
        value = parse(reply.text)
        if cached is None:
            cache.put(key, reply)
        return value

    run = await run_stage(
        stage, deadline_at, work(), count=count, with_budget=True, absorb=OperatorError
    )
    usage = _usage(received[0]) if received else None
    model = ModelStageReport(
        stage=stage.value,
        model=chat.model,
        prompt_version=prompt_version,
        cached=cached is not None,
        usage=usage,
    )
    return Asked(run.value, run.report, model)


def _usage(reply: ChatReply) -> TokenUsage | None:
    if reply.prompt_tokens is None and reply.completion_tokens is None:
        return None
    return TokenUsage(
        prompt_tokens=reply.prompt_tokens or 0, completion_tokens=reply.completion_tokens or 0
    )
