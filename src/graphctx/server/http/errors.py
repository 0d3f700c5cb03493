"""The one place errors become HTTP responses: RFC 9457 ``application/problem+json``.

Every error body has the same shape (:class:`~graphctx.server.models.Problem`) and a stable
``code``. Caller errors carry their message; operator errors and anything unexpected carry a
fixed sentence (the real cause goes to the log with the trace id), never a stack trace.
A project or document the caller may not see gets the very same 404 body as a missing one.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from graphctx.errors import (
    AccessDeniedError,
    BudgetTooSmallError,
    CallerError,
    ConfigurationError,
    DocumentConflictError,
    EmbeddingError,
    GraphctxError,
    InvalidDocumentError,
    InvalidRequestError,
    NotFoundError,
    StoreCorruptError,
    StoreUnavailableError,
)
from graphctx.server.errors import (
    AuthenticationError,
    LimitExceededError,
    MalformedBodyError,
    MethodNotAllowedError,
    NothingIngestedError,
    PayloadTooLargeError,
    RateLimitedError,
    UnsupportedMediaTypeError,
)
from graphctx.server.logs import current_trace_id, log_event
from graphctx.server.metrics import Metrics
from graphctx.server.models import Problem

__all__ = [
    "PROBLEM_MEDIA_TYPE",
    "install_error_handlers",
    "problem_for",
    "problem_response",
    "status_for",
]

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("graphctx.server")

# Most specific first: the first matching class decides the status.
_STATUS: tuple[tuple[type[GraphctxError], int], ...] = (
    (AuthenticationError, 401),
    (AccessDeniedError, 403),
    (NotFoundError, 404),
    (PayloadTooLargeError, 413),
    (RateLimitedError, 429),
    (MalformedBodyError, 400),
    (MethodNotAllowedError, 405),
    (UnsupportedMediaTypeError, 415),
    (LimitExceededError, 422),
    (NothingIngestedError, 422),
    (InvalidRequestError, 422),
    (DocumentConflictError, 409),
    (InvalidDocumentError, 422),
    (BudgetTooSmallError, 422),
    (CallerError, 400),
    (StoreUnavailableError, 503),
    (EmbeddingError, 503),
    (StoreCorruptError, 500),
    (ConfigurationError, 500),
    (GraphctxError, 500),
)
_OPERATOR_DETAIL = {
    503: "the service is temporarily unavailable; retry later",
    500: "the service failed to handle the request",
}


def status_for(exc: GraphctxError) -> int:
    return next(status for cls, status in _STATUS if isinstance(exc, cls))


def problem_for(exc: BaseException) -> Problem:
    trace_id = current_trace_id.get()
    if not isinstance(exc, GraphctxError):
        return _problem(500, "internal_error", _OPERATOR_DETAIL[500], False, trace_id)
    status = status_for(exc)
    detail = exc.message if isinstance(exc, CallerError) else _OPERATOR_DETAIL.get(status, "")
    problem = _problem(status, exc.code, detail, exc.retryable, trace_id)
    field = getattr(exc, "field", None)
    if isinstance(field, str):
        problem.field = field
    if isinstance(exc, RateLimitedError):
        problem.retry_after_s = exc.retry_after_s
    if isinstance(exc, NothingIngestedError):
        problem.errors = exc.errors
    return problem


def problem_response(exc: BaseException, metrics: Metrics | None = None) -> Response:
    problem = problem_for(exc)
    if metrics is not None:
        metrics.observe_error(problem.code)
    if problem.status >= 500:
        log_event(
            log,
            "request failed",
            logging.ERROR,
            code=problem.code,
            error=type(exc).__name__,
            cause=str(exc),
        )
    headers: dict[str, str] = {}
    if problem.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="graphctx"'
    if problem.retry_after_s is not None:
        headers["Retry-After"] = str(problem.retry_after_s)
    elif problem.status == 503:
        headers["Retry-After"] = "1"
    return JSONResponse(
        problem.model_dump(exclude_none=True),
        status_code=problem.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def install_error_handlers(app: FastAPI, metrics: Metrics) -> None:
    async def on_graphctx_error(request: Request, exc: Exception) -> Response:
        return problem_response(exc, metrics)

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return problem_response(_from_validation(exc), metrics)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return problem_response(_from_http(exc), metrics)

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        log.error("unhandled error", exc_info=exc)
        return problem_response(exc, metrics)

    app.add_exception_handler(GraphctxError, on_graphctx_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(Exception, on_unexpected)


def _problem(status: int, code: str, detail: str, retryable: bool, trace_id: str | None) -> Problem:
    return Problem(
        type=f"urn:graphctx:problem:{code}",
        title=HTTPStatus(status).phrase,
        status=status,
        detail=detail,
        code=code,
        retryable=retryable,
        trace_id=trace_id,
    )


def _from_validation(exc: RequestValidationError) -> GraphctxError:
    errors: list[Any] = list(exc.errors())
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        return MalformedBodyError("the body is not valid JSON")
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    message = str(first.get("msg", "invalid request"))
    return InvalidRequestError(f"{where}: {message}" if where else message, field=where or None)


def _from_http(exc: StarletteHTTPException) -> GraphctxError:
    if exc.status_code == 404:
        return NotFoundError("no such resource", code="not_found")
    if exc.status_code == 400:
        return MalformedBodyError("the body could not be parsed")
    if exc.status_code == 405:
        return MethodNotAllowedError("method not allowed")
    return CallerError(HTTPStatus(exc.status_code).phrase, code="http_error")
