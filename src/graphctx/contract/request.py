"""ContextRequest: what an agent asks, on whose behalf, within which limits."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from enum import StrEnum
from typing import Annotated

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
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
    """One retrieval request. Frozen, and closed to unknown fields.

    JSON is validated strictly (an HTTP or MCP body: ``"max_tokens": 600.0`` or
    ``"retrieval_mode": "HYBRID"`` is refused). Python construction is lenient where nothing
    is lost: ``retrieval_mode`` also takes an enum value or name as a string (``"hybrid"``,
    ``"HYBRID"``), ``allowed_scopes`` any collection of names (a tuple, a set; normalised to a
    sorted list without duplicates), and ``max_tokens`` / ``timeout_ms`` an integral float.
    """

    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, use_attribute_docstrings=True
    )

    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
    """The question, in natural language: at least one non-whitespace character, no control
    characters, at most 4,000 characters."""
    principal_id: PrincipalId
    """Who the evidence is for. Over HTTP it must be the API key's principal unless the key
    may impersonate."""
    allowed_scopes: Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)]
    """The scopes the caller allows for this request (1 to 256 names). They only narrow:
    the effective scopes are the principal's grants intersected with these."""
    namespace: NamespaceName = "default"
    """The project (namespace) to search; every request is bound to exactly one."""
    retrieval_mode: RetrievalMode = RetrievalMode.AUTO
    """Which retrieval routes are allowed; ``auto`` lets the router decide."""
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] = DEFAULT_MAX_TOKENS
    """The token budget of the bundle's content; the bundle never exceeds it."""
    timeout_ms: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)] = DEFAULT_TIMEOUT_MS
    """The deadline of the whole request, in milliseconds; stages that run out of their share
    are reported as timed out and the bundle is marked partial."""
    freshness_required_at: AwareDatetime | None = None
    """When set (a timestamp with a time zone), only evidence valid at that instant is
    returned; null: evidence valid now, stale items marked as such."""
    trace_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,128}$")] = Field(
        default_factory=new_trace_id
    )
    """Correlates the request with its logs and response; generated when omitted."""

    @field_validator("retrieval_mode", mode="before")
    @classmethod
    def _mode_by_value_or_name(cls, value: object, info: ValidationInfo) -> object:
        if info.mode != "python" or not isinstance(value, str) or isinstance(value, StrEnum):
            return value
        for mode in RetrievalMode:
            if value in (mode.value, mode.name):
                return mode
        allowed = ", ".join(f"{m.value!r}" for m in RetrievalMode)
        raise ValueError(f"retrieval_mode must be one of {allowed} (or its upper-case name)")

    @field_validator("allowed_scopes", mode="before")
    @classmethod
    def _scopes_from_any_collection(cls, value: object, info: ValidationInfo) -> object:
        if info.mode != "python" or isinstance(value, str | bytes | bytearray | Mapping):
            return value
        if isinstance(value, AbstractSet):
            return sorted(value, key=str)  # an unordered collection, made deterministic
        if isinstance(value, Sequence):
            return list(value)
        return value

    @field_validator("max_tokens", "timeout_ms", mode="before")
    @classmethod
    def _integral_float_is_an_int(cls, value: object, info: ValidationInfo) -> object:
        if info.mode == "python" and isinstance(value, float) and value.is_integer():
            return int(value)
        return value

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
