"""The HTTP listener: bound by ``graphctx serve`` itself, then handed to uvicorn.

Binding first turns "address already in use" (and any other bind failure) into a
:class:`~graphctx.errors.ConfigurationError` the CLI prints as one line (exit 3), where uvicorn
would log it as a JSON line and exit 1 after building the whole service.
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import Final

import uvicorn
from starlette.types import ASGIApp

from graphctx.errors import ConfigurationError
from graphctx.server.logs import log_event

__all__ = ["BIND_FAILED", "PORT_IN_USE", "bind_listener", "run_uvicorn"]

PORT_IN_USE: Final = "port_in_use"
BIND_FAILED: Final = "bind_failed"
LISTEN_BACKLOG: Final = 2048  # uvicorn's default

log = logging.getLogger("graphctx.server")


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (SO_REUSEADDR, as uvicorn would bind it)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        listener = socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigurationError(
                f"port {port} on {host} is already in use: stop what listens there, or pick"
                " another with --port",
                code=PORT_IN_USE,
            ) from exc
        reason = exc.strerror or str(exc)
        raise ConfigurationError(
            f"cannot listen on {host}:{port}: {reason}", code=BIND_FAILED
        ) from exc
    listener.set_inheritable(True)
    return listener


def run_uvicorn(app: ASGIApp, listener: socket.socket) -> None:
    """Serve ``app`` on ``listener`` until a signal stops it."""
    config = uvicorn.Config(app, log_config=None, access_log=False, proxy_headers=False)
    host, port = listener.getsockname()[:2]
    log_event(log, f"listening on {host}:{port}", host=host, port=port)
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()
