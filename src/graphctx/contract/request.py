"""ContextRequest: what an agent asks, on whose behalf, within which limits."""

from __future__ import annotations

import re
import uuid
from typing import Annotated

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from graphctx.contract.enums import RetrievalMode

MAX_QUERY_CHARS = 4_000
MAX_TOKENS_LIMIT = 200_000
MAX_TIMEOUT_MS = 120_000
MAX_SCOPES = 256
DEFAULT_MAX_TOKENS = 2_000
DEFAULT_TIMEOUT_MS = 3_000

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$"
NAMESPACE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"

ScopeName = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
PrincipalId = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
NamespaceName = Annotated[str, StringConstraints(pattern=NAMESPACE_PATTERN)]

_STRICT = ConfigDict(strict=True)
_SCOPE_NAME: TypeAdapter[str] = TypeAdapter(ScopeName, config=_STRICT)
_NAMESPACE_NAME: TypeAdapter[str] = TypeAdapter(NamespaceName, config=_STRICT)


def is_scope_name(value: object) -> bool:
    """Whether ``value`` is a :data:`ScopeName` (a string matching :data:`NAME_PATTERN`), by
    the same validator a :class:`ContextRequest` applies to its scopes."""
    return _conforms(_SCOPE_NAME, value)


def is_namespace_name(value: object) -> bool:
    """Whether ``value`` is a :data:`NamespaceName` (a string matching
    :data:`NAMESPACE_PATTERN`), by the validator of ``ContextRequest.namespace``."""
    return _conforms(_NAMESPACE_NAME, value)


def _conforms(adapter: TypeAdapter[str], value: object) -> bool:
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


def new_trace_id() -> str:
    return uuid.uuid4().hex


class ContextRequest(BaseModel):
    """One retrieval request. Frozen, strict, and closed to unknown fields."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
    principal_id: PrincipalId
    allowed_scopes: Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)]
    namespace: NamespaceName = "default"
    retrieval_mode: RetrievalMode = RetrievalMode.AUTO
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] = DEFAULT_MAX_TOKENS
    timeout_ms: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)] = DEFAULT_TIMEOUT_MS
    freshness_required_at: AwareDatetime | None = None
    trace_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,128}$")] = Field(
        default_factory=new_trace_id
    )

    @field_validator("query")
    @classmethod
    def _query_has_content(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must contain non-whitespace characters")
        if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", value):
            raise ValueError("query must not contain control characters")
        return value

    @field_validator("allowed_scopes")
    @classmethod
    def _scopes_are_unique(cls, value: list[str]) -> list[str]:
        return sorted(set(value))
