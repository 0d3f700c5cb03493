"""A minimal client for any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

Standard library only. 429, 5xx, timeouts and connection failures are retried a bounded
number of times with capped backoff; redirects are refused (the API key never goes to another
host) and the key never appears in ``repr`` or messages. The reply's text is returned as is:
callers validate it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from http.client import HTTPException
from typing import Protocol

from graphctx.errors import ConfigurationError, OperatorError

__all__ = ["ChatClient", "ChatError", "ChatMessage", "OpenAICompatibleChat"]

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 2
BACKOFF_S = 0.5
MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class ChatError(OperatorError):
    """The chat endpoint failed or answered something that is not a chat completion."""

    code = "chat_failed"


@dataclass(frozen=True)
class ChatMessage:
    role: str  # system | user | assistant
    content: str


class ChatClient(Protocol):
    def complete(self, messages: Sequence[ChatMessage]) -> str: ...


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


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
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.temperature = temperature
        self._opener = urllib.request.build_opener(_RefuseRedirects())

    def __repr__(self) -> str:
        return f"OpenAICompatibleChat({self.base_url!r}, model={self.model!r})"

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        body = json.dumps(
            {
                "model": self.model,
                "temperature": self.temperature,
                "messages": [{"role": m.role, "content": m.content} for m in messages],
            },
            ensure_ascii=False,
        ).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        last: str = "no attempt"
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(min(8.0, BACKOFF_S * 2 ** (attempt - 1)))
            request = urllib.request.Request(
                f"{self.base_url}/chat/completions", data=body, headers=headers, method="POST"
            )
            try:
                with self._opener.open(request, timeout=self.timeout_s) as response:
                    raw = response.read(MAX_RESPONSE_BYTES + 1)
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
                if exc.code == 429 or exc.code >= 500:
                    continue
                raise ChatError(f"chat endpoint refused the request: {last}") from exc
            except (urllib.error.URLError, TimeoutError, HTTPException, OSError) as exc:
                last = type(exc).__name__
                continue
            return _content(raw)
        raise ChatError(f"chat endpoint failed after {self.max_retries + 1} attempts: {last}")


def _content(raw: bytes) -> str:
    if len(raw) > MAX_RESPONSE_BYTES:
        raise ChatError("chat response is too large")
    try:
        data = json.loads(raw)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ChatError("chat response is not an OpenAI chat completion") from exc
    if not isinstance(content, str):
        raise ChatError("chat completion has no text content")
    return content
