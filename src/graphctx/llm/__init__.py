"""The LLM port and the OpenAI-compatible HTTP clients.

``port``: ``ChatMessage`` and the ``ChatClient`` protocol that concept extraction, Text2Cypher
and answer generation depend on. ``chat``: the client for any OpenAI-compatible
``/chat/completions`` endpoint. ``transport``: the one HTTP transport the chat client and the
OpenAI-compatible embedder share (redirect refusal, bounded retries, size cap, timeouts).
"""

from graphctx.llm.chat import ChatError, OpenAICompatibleChat
from graphctx.llm.port import (
    ChatClient,
    ChatMessage,
    ChatReply,
    ChatRole,
    ModelChat,
    ModelReplyError,
)

__all__ = [
    "ChatClient",
    "ChatError",
    "ChatMessage",
    "ChatReply",
    "ChatRole",
    "ModelChat",
    "ModelReplyError",
    "OpenAICompatibleChat",
]
