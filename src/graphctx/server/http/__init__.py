"""The HTTP face: FastAPI app factory, routes, error mapping, limits (the server extra)."""

from graphctx.extras import require_extra

require_extra("server")

from graphctx.server.http.app import create_app  # noqa: E402

__all__ = ["create_app"]
