"""The MCP face: tools over the service, stdio and streamable-HTTP transports (the server
extra)."""

from graphctx.extras import require_extra

require_extra("server")

from graphctx.server.mcp.tools import build_mcp_server  # noqa: E402
from graphctx.server.mcp.transport import McpHttpEndpoint, serve_stdio  # noqa: E402

__all__ = ["McpHttpEndpoint", "build_mcp_server", "serve_stdio"]
