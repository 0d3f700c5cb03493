"""A minimal client for any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

Over the shared :mod:`~graphctx.llm.transport`: 429, 5xx, timeouts and connection failures
are retried a bounded number of times with capped backoff; redirects are refused (the API key
never goes to another host) and the key never appears in ``repr`` or messages. The reply's
text is returned as is: callers validate it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from graphctx.errors import ConfigurationError, OperatorError
from graphctx.llm.port import ChatMessage, ChatReply
from graphctx.llm.transport import ErrorStatus, JsonTransport, ResponseTooLarge, RetryPolicy

__all__ = ["ChatError", "OpenAICompatibleChat"]

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 2
BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class ChatError(OperatorError):
    """The chat endpoint failed or answered something that is not a chat completion."""

    code = "chat_failed"


class OpenAICompatibleChat:
    """``complete(messages) -> str`` over an OpenAI-compatible chat API. No I/O at construction."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        temperature: float = 0.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(f"chat base_url must be http(s): {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.temperature = temperature
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # Unlike the embedder, an untrusted certificate is retried too (as this client always
        # has); no jitter and no Retry-After: the first retry waits BACKOFF_S.
        retry = RetryPolicy(
            max_retries,
            BACKOFF_S,
            MAX_BACKOFF_S,
            jitter=False,
            honour_retry_after=False,
            retry_untrusted_certificates=True,
        )
        self._transport = JsonTransport(
            f"{self.base_url}/chat/completions",
            headers,
            timeout_s=timeout_s,
            max_response_bytes=MAX_RESPONSE_BYTES,
            retry=retry,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleChat({self.base_url!r}, model={self.model!r})"

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        return self.reply(messages).text

    def reply(self, messages: Sequence[ChatMessage]) -> ChatReply:
        """The reply's text with the ``usage`` token counts the endpoint sent, if any."""
        outcome = self._transport.post(
            {
                "model": self.model,
                "temperature": self.temperature,
                "messages": [m.as_dict() for m in messages],
            }
        )
        if isinstance(outcome, bytes):
            return _reply(outcome)
        failure = outcome.failure
        if isinstance(failure, ResponseTooLarge):
            raise ChatError("chat response is too large")
        if isinstance(failure, ErrorStatus) and not outcome.retries_exhausted:
            refused = f"chat endpoint refused the request: HTTP {failure.status}"
            raise ChatError(refused) from failure.cause
        last = (
            f"HTTP {failure.status}"
            if isinstance(failure, ErrorStatus)
            else type(failure.cause).__name__
        )
        raise ChatError(f"chat endpoint failed after {outcome.attempts} attempts: {last}")


def _reply(raw: bytes) -> ChatReply:
    try:
        data = json.loads(raw)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ChatError("chat response is not an OpenAI chat completion") from exc
    if not isinstance(content, str):
        raise ChatError("chat completion has no text content")
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return ChatReply(content)
    return ChatReply(
        content, _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
