"""Every error graphctx raises, rooted at one class and branched by who must react.

::

    GraphctxError                      code, message, retryable
    ├── CallerError                    the request or input is wrong; retrying will not help
    │   ├── InvalidRequestError        malformed or out-of-range request fields
    │   ├── AccessDeniedError          no effective scope is left for this principal
    │   ├── InvalidDocumentError       a document cannot be ingested (binary, bad UTF-8, ...)
    │   │   └── DocumentConflictError  the document id is not this writer's to write right now
    │   ├── NotFoundError              the namespace or document does not exist (or is not visible)
    │   ├── BudgetTooSmallError        the context budget leaves no room for evidence
    │   └── AnswerContractError        a model answer broke the answer schema or cited unknown ids
    └── OperatorError                  the deployment is wrong or unhealthy
        ├── StoreUnavailableError      the store cannot be opened or reached (retryable
        │                              unless an operator must act first)
        ├── StoreCorruptError          the store file is not a graphctx store or is damaged
        ├── EmbeddingError             the embedder failed (retryable when remote)
        └── ConfigurationError         a setting is missing or contradictory
            ├── EmbedderMismatchError  the namespace was written by another embedder
            └── MissingExtraError      a face or backend whose extra is not installed
                                       (also an ImportError)

Outcomes that are data (nothing found, one retriever timing out, budget truncation) are
reported inside the ContextResponse, never raised. Third-party exceptions are wrapped with
``raise ... from``.
"""

from __future__ import annotations

__all__ = [
    "AccessDeniedError",
    "AnswerContractError",
    "BudgetTooSmallError",
    "CallerError",
    "ConfigurationError",
    "DocumentConflictError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "GraphctxError",
    "InvalidDocumentError",
    "InvalidRequestError",
    "MissingExtraError",
    "NotFoundError",
    "OperatorError",
    "StoreCorruptError",
    "StoreUnavailableError",
]


class GraphctxError(Exception):
    """Root of every graphctx error. ``code`` is stable and machine readable."""

    code: str = "graphctx_error"
    retryable: bool = False

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class CallerError(GraphctxError):
    """The caller sent something wrong; fix the input, do not retry as is."""

    code = "caller_error"


class InvalidRequestError(CallerError):
    code = "invalid_request"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None):
        super().__init__(message, code=code)
        self.field = field


class AccessDeniedError(CallerError):
    code = "access_denied"


class InvalidDocumentError(CallerError):
    code = "invalid_document"

    def __init__(self, message: str, *, path: str | None = None, code: str | None = None):
        super().__init__(message, code=code)
        self.path = path


class DocumentConflictError(InvalidDocumentError):
    """The writer may not write or delete this document id now.

    One answer, with one message, for every reason: the document holds a scope the writer
    lacks (whether the writer can read it or not), or it changed between the writer's check
    and its write (compare-and-set inside the store's write transaction). A caller learns
    only that the id is not its to manage, never why.
    """

    code = "document_id_conflict"
    MESSAGE = "this document id belongs to a document this key cannot manage right now"

    def __init__(self, *, path: str | None = None) -> None:
        super().__init__(self.MESSAGE, path=path)


class NotFoundError(CallerError):
    code = "not_found"


class BudgetTooSmallError(CallerError):
    code = "budget_too_small"


class AnswerContractError(CallerError):
    """A model answer broke the contract; reject it (or regenerate), never repair it silently.

    Codes: ``invalid_answer`` (not the schema), ``unknown_citation_ids``,
    ``answered_without_citations``, ``insufficient_with_citations``.
    """

    code = "invalid_answer"

    def __init__(
        self, message: str, *, code: str | None = None, unknown_ids: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, code=code)
        self.unknown_ids = unknown_ids


class OperatorError(GraphctxError):
    """The deployment needs attention (store, embedder, configuration)."""

    code = "operator_error"


class StoreUnavailableError(OperatorError):
    """The store cannot be reached or used right now.

    ``retryable`` (the default) means the same call may succeed later without anyone acting:
    the store is busy, locked by another process, restarting, or the request ran out of time.
    It is false when an operator must act first: the store's directory is missing, the file
    cannot be opened, the disk is full or read-only.
    """

    code = "store_unavailable"
    retryable = True

    def __init__(self, message: str, *, retryable: bool = True, code: str | None = None):
        super().__init__(message, code=code)
        self.retryable = retryable


class StoreCorruptError(OperatorError):
    code = "store_corrupt"


class EmbeddingError(OperatorError):
    code = "embedding_failed"

    def __init__(self, message: str, *, retryable: bool = False, code: str | None = None):
        super().__init__(message, code=code)
        self.retryable = retryable


class ConfigurationError(OperatorError):
    code = "configuration_error"


class EmbedderMismatchError(ConfigurationError):
    """A namespace's vectors were written by one embedder and another one is in use.

    Vectors of different models are not comparable, so both a query and an ingest with the
    wrong embedder are refused. ``stored`` and ``requested`` read like
    ``"use-multilingual-v3 (512 dims)"``; the fix is to configure the stored one (or ingest
    into a new namespace).
    """

    code = "embedder_mismatch"

    def __init__(self, namespace: str, stored: str, requested: str) -> None:
        super().__init__(
            f"namespace {namespace!r} was written with embedder {stored}; refusing to use it"
            f" with embedder {requested} (configure {stored} or use another namespace)"
        )
        self.namespace = namespace
        self.stored = stored
        self.requested = requested


class MissingExtraError(ConfigurationError, ImportError):
    """A face or backend was used without the extra that installs its packages.

    The message names the extra and the command that installs it (``pip install
    'graphctx[neo4j]'``). It is also an ``ImportError``, because that is what it replaces: code
    that probes an optional part with ``try: import ... except ImportError`` keeps working.
    """

    code = "missing_extra"

    def __init__(self, extra: str, feature: str, package: str) -> None:
        super().__init__(
            f"{feature} needs the {package} package: install graphctx[{extra}]"
            f" (pip install 'graphctx[{extra}]')"
        )
        self.extra = extra
        self.package = package
