"""graphctx as a service: HTTP API and MCP server over one ContextProvider.

Entry points build :class:`ServiceSettings` (``load_settings``) and an unopened provider,
then ``create_app`` (HTTP + MCP streamable HTTP) or ``serve_stdio`` (MCP over stdio).
"""

from graphctx.server.config import ServiceSettings, load_settings
from graphctx.server.http.app import create_app
from graphctx.server.mcp.transport import serve_stdio

__all__ = ["ServiceSettings", "create_app", "load_settings", "serve_stdio"]
