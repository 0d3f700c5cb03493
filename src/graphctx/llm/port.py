"""The LLM port: chat messages and the client protocol everything that asks a model uses.

Concept extraction, Text2Cypher and answer rendering build :class:`ChatMessage` values; a
:class:`ChatClient` (:class:`~graphctx.llm.chat.OpenAICompatibleChat`, or a test's own)
turns them into the model's reply text, which the caller validates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["ChatClient", "ChatMessage", "ChatRole"]

ChatRole = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: ChatRole
    content: str

    def as_dict(self) -> dict[str, str]:
        """The OpenAI-compatible ``{"role", "content"}`` shape."""
        return {"role": self.role, "content": self.content}


class ChatClient(Protocol):
    def complete(self, messages: Sequence[ChatMessage]) -> str: ...
