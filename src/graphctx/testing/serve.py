"""Run an ASGI app on a real loopback socket in a background thread (tests, benchmarks)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import uvicorn
from starlette.types import ASGIApp

__all__ = ["serve_in_thread"]

STARTUP_TIMEOUT_S: Final = 60.0


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def serve_in_thread(app: ASGIApp, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` on a free port of ``host``; yield its base URL; stop on exit."""
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that declare it,
    # and without it every small response waits out a delayed ACK (~40 ms).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    server = _Server(config)

    def run() -> None:
        try:
            server.run(sockets=[sock])
        finally:
            server.ready.set()  # a start-up that fails must not leave the caller waiting

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        if not server.ready.wait(STARTUP_TIMEOUT_S) or server.should_exit or not thread.is_alive():
            raise RuntimeError("the server did not start")
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(STARTUP_TIMEOUT_S)
        sock.close()
