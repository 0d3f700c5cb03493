"""The one place errors become MCP tool results (``is_error: true``).

Same codes and the same rule as HTTP: caller errors carry their message, operator errors and
anything unexpected a fixed sentence; a project the caller may not see reads as missing.
"""

from __future__ import annotations

import json
import logging

from mcp_types import CallToolResult, TextContent

from graphctx.errors import CallerError, GraphctxError

__all__ = ["tool_error"]

log = logging.getLogger("graphctx.mcp")


def tool_error(exc: BaseException) -> CallToolResult:
    if isinstance(exc, GraphctxError):
        code, retryable = exc.code, exc.retryable
        message = exc.message if isinstance(exc, CallerError) else "the service failed; retry later"
    else:
        code, retryable, message = "internal_error", False, "the service failed"
    if not isinstance(exc, CallerError):
        log.error("tool failed", extra={"code": code, "error": type(exc).__name__})
    body = {"code": code, "message": message, "retryable": retryable}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))], is_error=True)
