"""The HTTP face: FastAPI app factory, routes, error mapping, limits."""

from graphctx.server.http.app import create_app

__all__ = ["create_app"]
