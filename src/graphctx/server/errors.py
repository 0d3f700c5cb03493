"""Errors only the service faces raise. They extend the core tree in :mod:`graphctx.errors`.

::

    CallerError
    ├── AuthenticationError        no credentials, or credentials that do not verify (401)
    ├── RateLimitedError           the key's token bucket is empty (429, ``retry_after_s``)
    ├── PayloadTooLargeError       the body is over the configured limit (413)
    ├── LimitExceededError         a field is over a configured cap (422)
    ├── MalformedBodyError         the body is not JSON, or not the declared media type (400)
    ├── NothingIngestedError       every document of an ingest request was refused (422,
    │                              each one's reason in ``errors``)
    ├── MethodNotAllowedError      the route exists, the method does not (405)
    └── UnsupportedMediaTypeError  the body's Content-Type is not one the route reads (415)

Authorisation failures reuse the core classes: a project or document the caller may not see is
a :class:`~graphctx.errors.NotFoundError` (exactly as if it did not exist); a visible project the
caller may not write, or a ``principal_id`` it may not act for, is an
:class:`~graphctx.errors.AccessDeniedError`. Status codes are assigned in one place:
:mod:`graphctx.server.http.errors` (HTTP) and :mod:`graphctx.server.mcp.errors` (MCP).
"""

from __future__ import annotations

from collections.abc import Sequence

from graphctx.errors import CallerError, NotFoundError
from graphctx.server.models import DocumentError

__all__ = [
    "AuthenticationError",
    "LimitExceededError",
    "MalformedBodyError",
    "MethodNotAllowedError",
    "NothingIngestedError",
    "PayloadTooLargeError",
    "RateLimitedError",
    "UnsupportedMediaTypeError",
    "project_not_found",
]


class AuthenticationError(CallerError):
    code = "unauthenticated"


class RateLimitedError(CallerError):
    code = "rate_limited"
    retryable = True

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class PayloadTooLargeError(CallerError):
    code = "payload_too_large"


class LimitExceededError(CallerError):
    code = "limit_exceeded"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class MalformedBodyError(CallerError):
    code = "malformed_body"


class NothingIngestedError(CallerError):
    """An ingest request none of whose documents or files could be ingested: nothing was
    written. (When some were, the answer is the ingest report, listing the others' errors.)"""

    code = "nothing_ingested"

    def __init__(self, errors: Sequence[DocumentError]) -> None:
        super().__init__(
            f"none of the {len(errors)} document(s) could be ingested; each one's reason is "
            "in errors"
        )
        self.errors = list(errors)


class MethodNotAllowedError(CallerError):
    code = "method_not_allowed"


class UnsupportedMediaTypeError(CallerError):
    code = "unsupported_media_type"


def project_not_found() -> NotFoundError:
    """The one error for a project that is missing *or* not granted: same code, same text."""
    return NotFoundError("no such project", code="not_found")
