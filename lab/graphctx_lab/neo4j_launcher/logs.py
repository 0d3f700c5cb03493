"""The ends of the server's logs, for the messages of a failed start."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CONSOLE_LOG", "log_tail", "tail_file", "tail_text"]

CONSOLE_LOG = "neo4j-console.log"  # the JVM's stdout and stderr, rewritten per launch


def tail_text(text: str, lines: int) -> str:
    kept = [line for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def tail_file(path: Path, lines: int) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return tail_text(data, lines)


def log_tail(home: Path) -> str:
    parts = [f"[{home / CONSOLE_LOG}]", tail_file(home / CONSOLE_LOG, 40)]
    debug = home / "logs" / "debug.log"
    if debug.is_file():
        parts += [f"[{debug}]", tail_file(debug, 15)]
    return "\n".join(parts)
