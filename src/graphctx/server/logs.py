"""Structured JSON logs: one object per line, each carrying the current trace id."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, TextIO

__all__ = ["JsonFormatter", "configure_logging", "current_trace_id", "log_event", "new_trace_id"]

current_trace_id: ContextVar[str | None] = ContextVar("graphctx_trace_id", default=None)

_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message"}
# Extra fields a library sets for its own terminal formatter, never copied into a JSON line:
# uvicorn's ``color_message`` is the message again with ANSI colour codes.
_TERMINAL_ONLY = frozenset({"color_message"})


def new_trace_id() -> str:
    return uuid.uuid4().hex


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        trace_id = getattr(record, "trace_id", None) or current_trace_id.get()
        if trace_id is not None:
            entry["trace_id"] = trace_id
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in _TERMINAL_ONLY and key not in entry:
                entry[key] = value
        if record.exc_info and record.exc_info[0] is not None:
            entry["exception"] = self.formatException(record.exc_info)  # logs only, never a body
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(level: str = "INFO", stream: TextIO | None = None) -> None:
    """JSON lines on ``stream`` (stderr: stdout may be the MCP stdio channel)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("graphctx", "uvicorn", "uvicorn.error", "mcp"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(level.upper())
    # The Neo4j driver's own complaints (lost connections, routing) as JSON lines too; never
    # below WARNING, where it would log Bolt traffic (query parameters) at DEBUG.
    driver = logging.getLogger("neo4j")
    driver.handlers[:] = [handler]
    driver.propagate = False
    driver.setLevel(max(logging.WARNING, logging.getLevelName(level.upper())))
    logging.getLogger("uvicorn.access").disabled = True  # replaced by graphctx.access


def log_event(
    logger: logging.Logger, message: str, level: int = logging.INFO, **fields: Any
) -> None:
    logger.log(level, message, extra=fields)
