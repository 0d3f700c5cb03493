"""graphctx as a service: HTTP API and MCP server over one ContextProvider.

Entry points build :class:`ServiceSettings` (``load_settings``) and an unopened provider,
then ``create_app`` (HTTP + MCP streamable HTTP) or ``serve_stdio`` (MCP over stdio).

The service needs the server extra (``pip install 'graphctx[server]'``). The names here load
on first use, so the CLI can import :mod:`graphctx.server.cli` on a base install; without the
extra, the first use raises MissingExtraError.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from graphctx.extras import require_extra

if TYPE_CHECKING:
    from graphctx.server.app import create_app
    from graphctx.server.config import ServiceSettings, load_settings
    from graphctx.server.mcp.transport import serve_stdio

__all__ = ["ServiceSettings", "create_app", "load_settings", "serve_stdio"]

_HOMES = {
    "ServiceSettings": "graphctx.server.config",
    "create_app": "graphctx.server.app",
    "load_settings": "graphctx.server.config",
    "serve_stdio": "graphctx.server.mcp.transport",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_extra("server")
    return getattr(importlib.import_module(home), name)
