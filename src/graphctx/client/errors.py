"""The service's problem bodies, turned back into the typed errors the service raised.

::

    OperatorError
    ├── ServiceUnreachableError   no answer from the service (refused, reset, timed out)
    └── UnexpectedResponseError   an answer that is not the service's (a proxy's HTML page,
                                  a body that is not the documented model)

Every other failure is the class the service itself raised, rebuilt from its ``code``,
``detail``, ``retryable``, ``field`` and ``retry_after_s``: the caller catches
:class:`~graphctx.errors.AccessDeniedError` or :class:`~graphctx.errors.NotFoundError`
whether it talks to a provider in-process or to the service over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from graphctx.errors import (
    AccessDeniedError,
    BudgetTooSmallError,
    CallerError,
    ConfigurationError,
    DocumentConflictError,
    EmbedderMismatchError,
    EmbeddingError,
    GraphctxError,
    InvalidRequestError,
    NotFoundError,
    OperatorError,
    StoreCorruptError,
    StoreUnavailableError,
)
from graphctx.server.errors import (
    AuthenticationError,
    LimitExceededError,
    MalformedBodyError,
    MethodNotAllowedError,
    PayloadTooLargeError,
    RateLimitedError,
    UnsupportedMediaTypeError,
)
from graphctx.server.models import Problem

__all__ = ["ServiceUnreachableError", "UnexpectedResponseError", "error_from_problem"]


class ServiceUnreachableError(OperatorError):
    """The service did not answer: connection refused or reset, DNS, or the client timeout."""

    code = "service_unreachable"
    retryable = True


class UnexpectedResponseError(OperatorError):
    """The service's address answered with something that is not a graphctx response."""

    code = "unexpected_response"


Build = Callable[[Problem], GraphctxError]

# A code the service sends whose class needs more than (message, code=...).
_BY_CODE: Final[dict[str, Build]] = {
    "rate_limited": lambda p: RateLimitedError(p.detail, retry_after_s=p.retry_after_s or 1),
    "limit_exceeded": lambda p: LimitExceededError(p.detail, field=p.field or ""),
    "document_id_conflict": lambda p: DocumentConflictError(),
    "budget_too_small": lambda p: BudgetTooSmallError(p.detail),
    "store_corrupt": lambda p: StoreCorruptError(p.detail),
    "embedding_failed": lambda p: EmbeddingError(p.detail, retryable=p.retryable),
    "embedder_mismatch": lambda p: ConfigurationError(p.detail, code=EmbedderMismatchError.code),
    "configuration_error": lambda p: ConfigurationError(p.detail),
    "missing_extra": lambda p: ConfigurationError(p.detail, code=p.code),
    "payload_too_large": lambda p: PayloadTooLargeError(p.detail),
    "malformed_body": lambda p: MalformedBodyError(p.detail),
    "method_not_allowed": lambda p: MethodNotAllowedError(p.detail),
    "unsupported_media_type": lambda p: UnsupportedMediaTypeError(p.detail),
    "unauthenticated": lambda p: AuthenticationError(p.detail),
}

# Otherwise the status decides the class; the service's code is kept.
_BY_STATUS: Final[dict[int, Build]] = {
    401: lambda p: AuthenticationError(p.detail, code=p.code),
    403: lambda p: AccessDeniedError(p.detail, code=p.code),
    404: lambda p: NotFoundError(p.detail, code=p.code),
    409: lambda p: DocumentConflictError(),
    422: lambda p: InvalidRequestError(p.detail, field=p.field, code=p.code),
    503: lambda p: StoreUnavailableError(p.detail, retryable=p.retryable, code=p.code),
}


def error_from_problem(problem: Problem) -> GraphctxError:
    """The typed error a problem body stands for (its code and message unchanged)."""
    build = _BY_CODE.get(problem.code) or _BY_STATUS.get(problem.status)
    if build is not None:
        return build(problem)
    if 400 <= problem.status < 500:
        return CallerError(problem.detail, code=problem.code)
    return OperatorError(problem.detail, code=problem.code)
