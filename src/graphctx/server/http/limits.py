"""Body-size limits, enforced before the body is read in full.

A declared ``Content-Length`` over the limit is refused at once, without reading a byte. A body
without one (chunked) is counted as it streams and refused the moment it passes the limit.
Document ingest gets the (larger) upload limit; every other route the API limit.
"""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphctx.server.errors import PayloadTooLargeError
from graphctx.server.http.errors import problem_response
from graphctx.server.metrics import Metrics

__all__ = ["BodyLimitMiddleware"]

_UPLOAD_PATH = re.compile(r"^/v1/projects/[^/]+/documents$")


class BodyLimitMiddleware:
    def __init__(
        self, app: ASGIApp, *, api_limit: int, upload_limit: int, metrics: Metrics
    ) -> None:
        self.app = app
        self.api_limit = api_limit
        self.upload_limit = upload_limit
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload_limit if _UPLOAD_PATH.match(scope["path"]) else self.api_limit
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await self._refuse(limit, scope, receive, send)
            return
        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise PayloadTooLargeError(f"the body is over the limit of {limit} bytes")
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except PayloadTooLargeError:
            if started:
                raise
            await self._refuse(limit, scope, receive, send)

    async def _refuse(self, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
        error = PayloadTooLargeError(f"the body is over the limit of {limit} bytes")
        response = problem_response(error, self.metrics)
        response.headers["Connection"] = "close"
        await response(scope, receive, send)
