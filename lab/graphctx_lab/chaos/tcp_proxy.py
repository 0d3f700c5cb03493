"""A TCP proxy that injects latency, stalls and connection resets between a client and a server.

Real sockets on both sides: the Neo4j driver connects to the proxy's loopback port and the
proxy relays every byte to the server, so a fault looks to the driver exactly like a slow,
hung or failing network:

- **latency**: each chunk of bytes is held ``latency_s`` before it is relayed (both
  directions, so a Bolt round trip pays it twice);
- **stall**: nothing is relayed until :meth:`TcpProxy.resume`; connections stay open and new
  ones are accepted, so the client waits on a socket that never answers (the case the
  server's own transaction timeout cannot end);
- **reset**: every open connection is aborted with a TCP RST, mid-request if one is running.

The proxy runs its own event loop on a daemon thread; the fault methods are thread-safe and
take effect for the next relayed chunk. Use it with ``bolt://`` URIs: a ``neo4j://`` driver
would ask the server for its routing table and then connect to the server's advertised
address directly, around the proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Final, Self

__all__ = ["TcpProxy"]

CHUNK_BYTES: Final = 64 * 1024
START_TIMEOUT_S: Final = 10.0
_LINGER_RESET: Final = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends RST


class TcpProxy:
    """Relay ``127.0.0.1:<port>`` to ``target_host:target_port`` with injectable faults."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0  # the listening port, once started
        self.connections_accepted = 0
        self.connections_reset = 0
        self._latency_s = 0.0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="tcp-proxy", daemon=True
        )
        self._server: asyncio.Server | None = None
        self._flowing: asyncio.Event | None = None  # set = relay, cleared = stalled
        self._open: set[asyncio.StreamWriter] = set()  # both ends of every relayed connection
        self._relays: set[asyncio.Task[Any]] = set()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    # --- lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> Self:
        self._thread.start()
        self._call(self._start())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT_S)
        self._loop.close()

    def _call(self, coro: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(START_TIMEOUT_S)

    async def _start(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._flowing is not None:
            self._flowing.set()
        if self._server is not None:
            self._server.close()
        self._abort_all()
        if self._relays:  # let every relay see its aborted sockets and finish
            await asyncio.wait(self._relays, timeout=START_TIMEOUT_S)

    # --- faults (thread-safe) -------------------------------------------------------------
    @property
    def latency_s(self) -> float:
        return self._latency_s

    @latency_s.setter
    def latency_s(self, value: float) -> None:
        self._latency_s = max(0.0, value)  # a float store is atomic; read per chunk

    def stall(self) -> None:
        """Stop relaying bytes (both directions, every connection, old and new)."""
        self._call(self._set_flowing(False))

    def resume(self) -> None:
        self._call(self._set_flowing(True))

    def reset_connections(self) -> int:
        """Abort every open connection with a TCP RST; return how many were open."""
        before = self.connections_reset
        self._call(self._reset())
        return self.connections_reset - before

    def heal(self) -> None:
        """No latency, no stall (open connections are kept)."""
        self.latency_s = 0.0
        self.resume()

    async def _set_flowing(self, flowing: bool) -> None:
        assert self._flowing is not None
        if flowing:
            self._flowing.set()
        else:
            self._flowing.clear()

    async def _reset(self) -> None:
        self._abort_all()

    def _abort_all(self) -> None:
        pairs = len(self._open) // 2
        for writer in list(self._open):
            _abort(writer)
        self._open.clear()
        self.connections_reset += pairs

    # --- relaying -------------------------------------------------------------------------
    async def _relay(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        self.connections_accepted += 1
        task = asyncio.current_task()
        if task is not None:
            self._relays.add(task)
            task.add_done_callback(self._relays.discard)
        try:
            server_in, server_out = await asyncio.open_connection(*self.target)
        except OSError:
            _abort(client_out)  # the server is down: the client sees a reset
            return
        self._open.update((client_out, server_out))
        try:
            await asyncio.gather(
                self._pump(client_in, server_out), self._pump(server_in, client_out)
            )
        finally:
            self._open.difference_update((client_out, server_out))
            for writer in (client_out, server_out):
                writer.close()

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        try:
            while data := await source.read(CHUNK_BYTES):
                if self._latency_s > 0:
                    await asyncio.sleep(self._latency_s)
                await self._flowing.wait()
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass  # one side went away: the finally of _relay closes the other
        finally:
            if sink.can_write_eof() and not sink.is_closing():
                with contextlib.suppress(OSError):
                    sink.write_eof()


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0), not the orderly FIN of ``close()``."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
    writer.transport.abort()
