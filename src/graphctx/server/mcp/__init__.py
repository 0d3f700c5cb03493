"""The MCP face: tools over the service, stdio and streamable-HTTP transports."""

from graphctx.server.mcp.tools import build_mcp_server
from graphctx.server.mcp.transport import McpHttpEndpoint, serve_stdio

__all__ = ["McpHttpEndpoint", "build_mcp_server", "serve_stdio"]
