"""Progress lines on stderr for long lab runs (``graphctx bench http``, ``graphctx chaos``).

On a terminal a line is redrawn in place; anywhere else (a CI log, a pipe) each update is its
own line, at most one every ``interval_s`` seconds, except a line marked ``final`` (a phase or a
scenario that ended), which is always printed. Stdout stays for the results.
"""

from __future__ import annotations

import sys
import time
from typing import Final, TextIO

__all__ = ["DEFAULT_INTERVAL_S", "Progress"]

DEFAULT_INTERVAL_S: Final = 5.0
TERMINAL_WIDTH: Final = 78


class Progress:
    def __init__(
        self, prefix: str, stream: TextIO | None = None, *, interval_s: float = DEFAULT_INTERVAL_S
    ) -> None:
        self._prefix = prefix
        self._stream = stream if stream is not None else sys.stderr
        self._interval_s = interval_s
        self._last_at: float | None = None
        self._redrawing = False

    def update(self, text: str, *, final: bool = False) -> None:
        line = f"{self._prefix}: {text}"
        now = time.monotonic()
        if self._stream.isatty():
            print(f"\r{line:<{TERMINAL_WIDTH}}", end="", file=self._stream, flush=True)
            self._redrawing = True
            if final:
                self.end_line()
            return
        if not final and self._last_at is not None and now - self._last_at < self._interval_s:
            return
        self._last_at = now
        print(line, file=self._stream, flush=True)

    def end_line(self) -> None:
        """Finish a line being redrawn on a terminal (before other output)."""
        if self._redrawing:
            print(file=self._stream, flush=True)
            self._redrawing = False
