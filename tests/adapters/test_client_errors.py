"""Every error the service maps to a problem body comes back from the client as its class
(or, where the class needs what the body does not carry, its nearest ancestor), with the
same code and retryable flag: the round trip through the service's own mapping."""

from __future__ import annotations

import pytest

from graphctx.client import error_from_problem
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
from graphctx.server.http.errors import problem_for

RAISED_AND_REBUILT: list[tuple[GraphctxError, type[GraphctxError]]] = [
    (AuthenticationError("the API key is not valid"), AuthenticationError),
    (AccessDeniedError("no", code="principal_mismatch"), AccessDeniedError),
    (NotFoundError("no such project"), NotFoundError),
    (PayloadTooLargeError("too big"), PayloadTooLargeError),
    (RateLimitedError("slow down", retry_after_s=3), RateLimitedError),
    (MalformedBodyError("not JSON"), MalformedBodyError),
    (MethodNotAllowedError("no"), MethodNotAllowedError),
    (UnsupportedMediaTypeError("json only"), UnsupportedMediaTypeError),
    (LimitExceededError("query too long", field="query"), LimitExceededError),
    (InvalidRequestError("bad", field="max_tokens"), InvalidRequestError),
    (InvalidRequestError("name one", field="namespace", code="namespace_required"),
     InvalidRequestError),
    (DocumentConflictError(), DocumentConflictError),
    (BudgetTooSmallError("no room"), BudgetTooSmallError),
    (CallerError("teapot", code="http_error"), CallerError),
    (StoreUnavailableError("locked"), StoreUnavailableError),
    (StoreUnavailableError("disk full", retryable=False), StoreUnavailableError),
    (StoreUnavailableError("busy", code="overloaded"), StoreUnavailableError),
    (EmbeddingError("remote down", retryable=True), EmbeddingError),
    (StoreCorruptError("damaged"), StoreCorruptError),
    (ConfigurationError("missing"), ConfigurationError),
    (EmbedderMismatchError("acme", "a (1 dims)", "b (2 dims)"), ConfigurationError),
    (OperatorError("odd"), OperatorError),
]  # fmt: skip


@pytest.mark.parametrize(("raised", "rebuilt_as"), RAISED_AND_REBUILT)
def test_the_client_rebuilds_the_error_the_service_raised(
    raised: GraphctxError, rebuilt_as: type[GraphctxError]
) -> None:
    problem = problem_for(raised)
    rebuilt = error_from_problem(problem)
    assert isinstance(rebuilt, rebuilt_as)
    assert (rebuilt.code, rebuilt.retryable) == (raised.code, raised.retryable)
    assert rebuilt.message == problem.detail
    assert getattr(rebuilt, "field", None) == getattr(raised, "field", None)
    assert getattr(rebuilt, "retry_after_s", None) == getattr(raised, "retry_after_s", None)
    assert isinstance(rebuilt, CallerError) == isinstance(raised, CallerError)
