"""MCP transports: streamable HTTP inside the FastAPI app, and stdio for local agents.

HTTP: mounted at ``/mcp`` behind the same authentication middleware as the REST routes; the
tools read the identity that middleware stored on the request. Stateless and JSON-only: every
POST is authenticated on its own and no session outlives it.

stdio: one identity for the process, from the API key in ``GRAPHCTX_MCP_STDIO_KEY`` (checked
against the same config as HTTP keys). Logs go to stderr; stdout is the protocol channel.
"""

from __future__ import annotations

from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from graphctx.errors import ConfigurationError, GraphctxError
from graphctx.provider import ContextProvider
from graphctx.server.auth import Authenticator, Identity
from graphctx.server.config import ServiceSettings
from graphctx.server.factory import compose_service, warm_up
from graphctx.server.mcp.tools import build_mcp_server
from graphctx.server.metrics import Metrics
from graphctx.server.service import GraphctxService

__all__ = ["McpHttpEndpoint", "serve_stdio"]


def _identity_from_http(ctx: ServerRequestContext[Any, Any]) -> Identity | None:
    request = ctx.request
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return None
    identity = scope.get("state", {}).get("identity")
    return identity if isinstance(identity, Identity) else None


class McpHttpEndpoint:
    """An ASGI app for ``/mcp``. Enter :meth:`run` in the app's lifespan."""

    def __init__(self, service: GraphctxService, max_body_bytes: int) -> None:
        self.manager = StreamableHTTPSessionManager(
            app=build_mcp_server(service, _identity_from_http),
            json_response=True,
            stateless=True,
            # API keys travel in headers a browser page cannot forge, so DNS rebinding gains
            # nothing; the auth middleware in front is the gate.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=max_body_bytes,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)


async def serve_stdio(settings: ServiceSettings, provider: ContextProvider) -> None:
    """Serve MCP on stdin/stdout as the identity of ``settings.mcp_stdio_key``."""
    if settings.mcp_stdio_key is None:
        raise ConfigurationError(
            "stdio MCP needs GRAPHCTX_MCP_STDIO_KEY (an API key in the config)"
        )
    try:
        identity = Authenticator(settings).authenticate_key(
            settings.mcp_stdio_key.get_secret_value()
        )
    except GraphctxError as exc:
        raise ConfigurationError(
            f"GRAPHCTX_MCP_STDIO_KEY is not a valid key: {exc.message}"
        ) from exc
    service = compose_service(settings, provider, Metrics())  # grants from the auth config
    served = service.provider
    server = build_mcp_server(service, lambda ctx: identity)
    await served.aopen()
    try:
        await warm_up(served)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await served.aclose()
