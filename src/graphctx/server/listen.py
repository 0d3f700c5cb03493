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

__all__ = ["BIND_FAILED", "PORT_IN_USE", "bind_listener", "bind_listeners", "run_uvicorn"]

PORT_IN_USE: Final = "port_in_use"
BIND_FAILED: Final = "bind_failed"
LISTEN_BACKLOG: Final = 2048  # uvicorn's default

log = logging.getLogger("graphctx.server")


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (SO_REUSEADDR, as uvicorn would bind it)."""
    return bind_listeners(host, port, 1)[0]


def bind_listeners(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening TCP sockets on ``host:port``, one per worker process.

    Several are bound with SO_REUSEPORT, so the kernel spreads new connections evenly over
    the workers (Linux hashes each connection to one socket). Workers on one shared socket
    would not share evenly: a worker's event loop accepts every connection pending when it
    wakes, so one worker could hold most of the clients' keep-alive connections while the
    other idled. Only processes of the same user can join the port.

    The sockets declare IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that do, and
    without it a small response can wait out a delayed ACK (~40 ms).
    """
    listeners: list[socket.socket] = []
    try:
        for _ in range(count):
            listeners.append(_bind(host, port, reuse_port=count > 1))
            port = listeners[0].getsockname()[1]  # port 0: the others join the chosen one
    except BaseException:
        for listener in listeners:
            listener.close()
        raise
    return listeners


def _bind(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", code=BIND_FAILED
        ) from exc
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind((host, port))
        listener.listen(LISTEN_BACKLOG)
    except OSError as exc:
        listener.close()
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
