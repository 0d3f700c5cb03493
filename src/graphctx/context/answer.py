"""The structured answer a model returns, and the error for any answer that breaks the contract.

The schema only fixes the shape: which ids exist, whether an ``answered`` reply cites anything
and what the ids point to are checked by ``resolve_citations`` against the server's source map.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphctx.errors import AnswerContractError

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_CITATIONS",
    "AnswerContractError",
    "AnswerPayload",
    "AnswerStatus",
    "CitationSelection",
    "answer_json_schema",
    "parse_answer",
]

MAX_ANSWER_CHARS = 8_000
MAX_CITATIONS = 32
MAX_CLAIM_CHARS = 500
CITATION_ID_PATTERN = r"^S[1-9][0-9]*$"

AnswerStatus = Literal["answered", "insufficient_evidence"]


_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


class CitationSelection(BaseModel):
    """One cited source: a prompt-local id and the claim it supports."""

    model_config = _STRICT

    source_id: Annotated[str, Field(pattern=CITATION_ID_PATTERN)]
    claim: Annotated[str, Field(min_length=1, max_length=MAX_CLAIM_CHARS)]


class AnswerPayload(BaseModel):
    model_config = _STRICT

    status: AnswerStatus
    answer: Annotated[str, Field(max_length=MAX_ANSWER_CHARS)]
    citations: Annotated[list[CitationSelection], Field(max_length=MAX_CITATIONS)]


def answer_json_schema() -> dict[str, Any]:
    """JSON Schema for structured-output / response_format requests."""
    return AnswerPayload.model_json_schema()


def parse_answer(raw: str | bytes | Mapping[str, object]) -> AnswerPayload:
    """Validate a model reply (JSON text or a decoded object) against the strict schema."""
    try:
        if isinstance(raw, str | bytes):
            return AnswerPayload.model_validate_json(raw)
        return AnswerPayload.model_validate(dict(raw))
    except ValidationError as exc:
        raise AnswerContractError(
            f"model answer does not match the schema: {exc.error_count()} error(s)"
        ) from exc
