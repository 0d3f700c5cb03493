"""A local OpenAI-compatible chat endpoint for tests: the only thing mocked is the hosted LLM.

Its answers carry every field of an OpenAI chat completion that SDK clients read (``id``,
``created``, ``model``, ``finish_reason``, ``usage``), so the official ``openai`` client and
the frameworks built on it (Agent Framework's OpenAI chat client) accept them as they are.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

ChatBody = dict[str, Any]


__all__ = ["ChatBody", "FakeChatServer", "UnanswerableChatRequest", "completion"]


class UnanswerableChatRequest(ValueError):
    """Raised by an ``answer`` function for a body it cannot answer: the server replies 400."""


def completion(body: ChatBody, reply: str, number: int) -> ChatBody:
    """An OpenAI ``chat.completion`` object answering ``reply`` to ``body``; its ``usage``
    counts the whitespace-separated words of the messages and of the reply."""
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    answered = len(reply.split())
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "fake")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answered,
            "total_tokens": prompt + answered,
        },
    }


class FakeChatServer:
    """POSTs to ``*/chat/completions`` are recorded in ``requests`` and answered by
    ``answer(body)`` (a reply, None for HTTP 500, or :class:`UnanswerableChatRequest` for 400);
    every other request is counted in ``stray_requests`` and gets 404. A reply reports
    ``usage`` as the endpoint would: here, the whitespace-separated words of the messages and
    of the reply. It listens on 127.0.0.1 at ``port`` (0: any free one)."""

    def __init__(self, answer: Callable[[ChatBody], str | None], port: int = 0) -> None:
        self.requests: list[ChatBody] = []
        self.stray_requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if not self.path.endswith("/chat/completions"):
                    self._stray()
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                try:
                    reply = answer(body)
                except UnanswerableChatRequest:
                    self.send_error(400)
                    return
                if reply is None:
                    self.send_error(500)
                    return
                payload = json.dumps(completion(body, reply, len(server.requests))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._stray()

            def _stray(self) -> None:
                server.stray_requests += 1
                self.send_error(404)

            def log_message(self, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
