"""Driver errors become the graphctx errors their reader must react to.

The caller decides by type and ``retryable``, never by driver class or Neo4j status code:

- the server stopped a transaction at its timeout -> ``StageTimeout`` (the pipeline reports
  the stage as timed out; it is data, not an error);
- the server is down, restarting, unreachable, or dropped the connection mid-request ->
  ``StoreUnavailableError`` with ``retryable=True`` (the same request will work again later);
- the credentials are wrong or expired -> ``StoreUnavailableError`` with ``retryable=False``
  (retrying cannot help; an operator must fix the settings);
- a write attempted in a READ transaction -> ``InvalidRequestError`` ``read_only_violation``;
- a missing graphctx index or invalid driver settings -> ``ConfigurationError``.
"""

from __future__ import annotations

from typing import Final

import neo4j.exceptions as neo4j_errors

from graphctx.errors import (
    ConfigurationError,
    GraphctxError,
    InvalidRequestError,
    StoreUnavailableError,
)
from graphctx.store.port import StageTimeout

__all__ = ["CREDENTIAL_CODES", "DRIVER_FAILURES", "as_graphctx_error", "unavailable"]

# Everything the driver raises when a statement, a connection or the server fails.
DRIVER_FAILURES: Final = (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError)

TIMEOUT_CODES: Final = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    }
)
MISSING_INDEX_CODES: Final = frozenset(
    {"Neo.ClientError.Schema.IndexNotFound", "Neo.ClientError.Procedure.ProcedureCallFailed"}
)
ACCESS_MODE_CODE: Final = "Neo.ClientError.Statement.AccessMode"
# Refusals that mean the credentials are wrong, not the statement (generated statements).
CREDENTIAL_CODES: Final = (
    "Neo.ClientError.Security.Unauthorized",
    "Neo.ClientError.Security.AuthenticationRateLimit",
    "Neo.ClientError.Security.CredentialsExpired",
    "Neo.ClientError.Security.TokenExpired",
)


def unavailable(message: str, *, retryable: bool) -> StoreUnavailableError:
    error = StoreUnavailableError(message)
    error.retryable = retryable
    return error


def as_graphctx_error(exc: BaseException, action: str) -> GraphctxError | StageTimeout:
    """The graphctx error for a driver failure during ``action`` (raise it ``from exc``)."""
    if isinstance(exc, neo4j_errors.Neo4jError):
        code = exc.code or ""
        if code in TIMEOUT_CODES:
            return StageTimeout(f"{action} passed its deadline on the server")
        if code == ACCESS_MODE_CODE:
            return InvalidRequestError(
                f"{action}: the server refused a write in a read-only transaction",
                code="read_only_violation",
            )
        if code in MISSING_INDEX_CODES and "index" in str(exc.message).lower():
            return ConfigurationError(
                f"{action}: a graphctx index is missing; run `graphctx neo4j init`"
            )
        if code.startswith("Neo.ClientError.Security."):
            return unavailable(f"{action}: Neo4j refused the credentials ({code})", retryable=False)
        return unavailable(f"{action} failed: {code}: {exc.message}", retryable=exc.is_retryable())
    if isinstance(exc, neo4j_errors.ConfigurationError | ValueError):
        return ConfigurationError(f"{action}: invalid Neo4j settings: {exc}")
    return unavailable(f"{action}: Neo4j is unreachable: {exc}", retryable=True)
