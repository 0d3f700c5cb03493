"""CORS for browser clients (a web MCP client, a page calling the API with a user's key).

Off by default: with no ``cors_origins`` configured no origin is allowed, so a preflight is
refused (400, no ``Access-Control-Allow-Origin``) — but never with a 401, because the layer sits
outside authentication and a preflight carries no key by design. A listed origin gets the
headers it needs to send an API key and read the answer; nothing else changes: every request
is still authenticated, and without ``allow_credentials`` no cookie of this service (the
explorer's session) is ever sent cross-origin on a page's behalf.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

__all__ = ["install_cors"]

ALLOWED_METHODS: Final = ("GET", "POST", "DELETE")
ALLOWED_HEADERS: Final = (
    "authorization",
    "x-api-key",
    "content-type",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
    "x-trace-id",
)
EXPOSED_HEADERS: Final = ("x-trace-id", "mcp-session-id", "retry-after", "www-authenticate")
PREFLIGHT_MAX_AGE_S: Final = 600


def install_cors(app: FastAPI, origins: Sequence[str]) -> None:
    """Add the CORS layer; call it after the authentication middleware (so it runs first)."""
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(origins),
        allow_methods=list(ALLOWED_METHODS),
        allow_headers=list(ALLOWED_HEADERS),
        expose_headers=list(EXPOSED_HEADERS),
        allow_credentials=False,
        max_age=PREFLIGHT_MAX_AGE_S,
    )
