"""Run a fuzz target in a separate process so that a hang is caught, not waited on.

A regular expression that backtracks, or a loop that never ends, holds the interpreter: a
thread with a timeout cannot interrupt it. The worker is a spawned process fed through a
pipe; a call that has not answered within the timeout kills it, a fresh one replaces it, and
the caller gets :class:`HangError` naming the input (:class:`CrashError` if the process
died). Exceptions come back as
:class:`Raised` values (type, stable code, message), because graphctx errors take keyword
arguments that pickling would lose.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["BoundedWorker", "CrashError", "HangError", "Raised"]

_START_TIMEOUT_S = 60.0


class HangError(AssertionError):
    """A target did not return within the profile's hang timeout."""


class CrashError(AssertionError):
    """A target took its process down (a segfault, a stack overflow in C code)."""


@dataclass(frozen=True)
class Raised:
    """An exception a target raised, as data."""

    type_name: str  # module-qualified
    code: str | None
    message: str
    is_graphctx_error: bool
    is_caller_error: bool


def _describe(exc: BaseException) -> Raised:
    from graphctx.errors import CallerError, GraphctxError

    kind = type(exc)
    return Raised(
        type_name=f"{kind.__module__}.{kind.__qualname__}",
        code=getattr(exc, "code", None),
        message=str(exc)[:500],
        is_graphctx_error=isinstance(exc, GraphctxError),
        is_caller_error=isinstance(exc, CallerError),
    )


def _serve(conn: Connection) -> None:
    while True:
        request = conn.recv()
        if request is None:
            return
        target, args = request
        try:
            conn.send(("ok", target(*args)))
        except Exception as exc:
            conn.send(("raised", _describe(exc)))


class BoundedWorker:
    """Calls module-level functions in a child process, each call within ``timeout_s``."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._context = multiprocessing.get_context("spawn")  # no fork of a threaded parent
        self._process: Any = None
        self._conn: Connection | None = None

    def call(self, target: Callable[..., object], *args: object) -> object:
        """``target(*args)``'s result, a :class:`Raised`, or :class:`HangError`."""
        conn = self._connection()
        conn.send((target, args))
        if not conn.poll(self.timeout_s):
            self._kill()
            shown = ", ".join(repr(arg)[:200] for arg in args)
            raise HangError(f"{target.__name__}({shown}) ran over {self.timeout_s} s")
        try:
            _status, value = conn.recv()  # a result or a Raised
        except EOFError:
            code = self._process.exitcode if self._process is not None else None
            self._kill()
            raise CrashError(f"{target.__name__} killed its worker (exit code {code})") from None
        return value

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):  # the worker may be gone already
                self._conn.send(None)
            self._process.join(timeout=5)
        self._kill()

    def _connection(self) -> Connection:
        if self._conn is None:
            parent, child = self._context.Pipe()
            process = self._context.Process(target=_serve, args=(child,), daemon=True)
            process.start()
            child.close()
            self._process, self._conn = process, parent
        return self._conn

    def _kill(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=_START_TIMEOUT_S)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None
