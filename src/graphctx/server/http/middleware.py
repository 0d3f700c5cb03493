"""Request middleware: trace id and access log (outermost), then authentication.

Authentication runs before any route code and before the body is read, for every path but the
probes, the metrics, the API docs (and their assets) and ``/.well-known/*`` (none is served:
OAuth-probing MCP clients get a plain 404, not a 401 that makes them look for an authorization
server); any other
unknown path needs credentials too, so routes cannot be enumerated anonymously. A CORS
preflight never reaches it: the CORS layer outside answers it
(:func:`graphctx.server.http.cors.install_cors`). The one exception is the evidence explorer
under ``/ui``: a browser cannot send an API key on a navigation, so those routes authenticate
their own session (made from an API key checked by the same Authenticator) and answer
unauthenticated requests with the login page.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import replace

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphctx.errors import GraphctxError
from graphctx.server.auth import Authenticator, Credentials, Identity
from graphctx.server.config import GatewayConfig
from graphctx.server.errors import RateLimitedError
from graphctx.server.http.docs import DOCS_ASSETS_PREFIX, DOCS_PATH
from graphctx.server.http.errors import problem_response
from graphctx.server.logs import current_trace_id, log_event, new_trace_id
from graphctx.server.metrics import Metrics
from graphctx.server.models import TRACE_ID_PATTERN
from graphctx.server.ratelimit import RateLimiter

__all__ = ["PUBLIC_PATHS", "AuthMiddleware", "TraceMiddleware"]

PUBLIC_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/openapi.json", DOCS_PATH})
WELL_KNOWN_PREFIX = "/.well-known/"
TRACE_HEADER = "x-trace-id"
_TRACE_ID = re.compile(TRACE_ID_PATTERN)
access_log = logging.getLogger("graphctx.access")


class TraceMiddleware:
    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get(TRACE_HEADER)
        trace_id = given if given is not None and _TRACE_ID.fullmatch(given) else new_trace_id()
        state = scope.setdefault("state", {})
        state["trace_id"] = trace_id
        token = current_trace_id.set(trace_id)
        status = 500
        started = time.perf_counter()

        async def traced_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)["X-Trace-Id"] = state.get("trace_id", trace_id)
            await send(message)

        try:
            await self.app(scope, receive, traced_send)
        finally:
            elapsed = time.perf_counter() - started
            route = _route_template(scope)
            self.metrics.observe_request(route, scope["method"], status, elapsed)
            identity = state.get("identity")
            log_event(
                access_log,
                "request",
                method=scope["method"],
                route=route,
                status=status,
                duration_ms=round(elapsed * 1000, 2),
                trace_id=state.get("trace_id", trace_id),
                subject=identity.subject if isinstance(identity, Identity) else None,
            )
            current_trace_id.reset(token)


class AuthMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator,
        limiter: RateLimiter,
        gateway: GatewayConfig,
        metrics: Metrics,
        own_authentication: Callable[[str], bool],
    ) -> None:
        self.app = app
        self.own_authentication = own_authentication
        self.authenticator = authenticator
        self.limiter = limiter
        self.gateway = gateway
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _is_public(scope["path"]):
            await self.app(scope, receive, send)
            return
        if self.own_authentication(scope["path"]):  # the explorer's session authentication
            await self.app(scope, receive, send)
            return
        try:
            credentials = Credentials.from_headers(Headers(scope=scope), self.gateway)
            client = scope.get("client")
            if client:
                credentials = replace(credentials, client=str(client[0]))
            identity = await self.authenticator.authenticate(credentials)
            wait_s = self.limiter.acquire(identity.subject)
            if wait_s > 0:
                raise RateLimitedError(
                    "this key is over its request rate", retry_after_s=max(1, math.ceil(wait_s))
                )
        except GraphctxError as exc:
            await problem_response(exc, self.metrics)(scope, receive, send)
            return
        scope.setdefault("state", {})["identity"] = identity
        await self.app(scope, receive, send)


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith((WELL_KNOWN_PREFIX, DOCS_ASSETS_PREFIX))


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    return "/mcp" if scope.get("path") == "/mcp" else "unmatched"
