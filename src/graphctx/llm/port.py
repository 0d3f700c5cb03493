"""The LLM port: chat messages and the client protocol everything that asks a model uses.

Concept extraction, Text2Cypher and answer rendering build :class:`ChatMessage` values; a
:class:`ChatClient` (:class:`~graphctx.llm.chat.OpenAICompatibleChat`, or a test's own)
turns them into the model's reply text, which the caller validates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from graphctx.errors import OperatorError

__all__ = ["ChatClient", "ChatMessage", "ChatReply", "ChatRole", "ModelChat", "ModelReplyError"]

ChatRole = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: ChatRole
    content: str

    def as_dict(self) -> dict[str, str]:
        """The OpenAI-compatible ``{"role", "content"}`` shape."""
        return {"role": self.role, "content": self.content}


class ModelReplyError(OperatorError):
    """A model's reply cannot be used: not the JSON asked for, or naming what it was not
    shown. ``code`` says which (``malformed_reply``, ``invented_ids``, ...)."""

    code = "malformed_reply"


@dataclass(frozen=True)
class ChatReply:
    """A reply's text and the token counts the endpoint reported (None: it reported none)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class ChatClient(Protocol):
    def complete(self, messages: Sequence[ChatMessage]) -> str: ...


class ModelChat(Protocol):
    """A chat client that names its model and reports token usage (the optional retrieval
    stages key their response cache on the model and account for its tokens)."""

    @property
    def model(self) -> str: ...

    def reply(self, messages: Sequence[ChatMessage]) -> ChatReply: ...
