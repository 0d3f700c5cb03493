"""Turning untrusted input into a ContextRequest, with one typed error on failure."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from graphctx.contract.request import ContextRequest
from graphctx.errors import InvalidRequestError


def parse_request(data: Mapping[str, object] | str | bytes) -> ContextRequest:
    """Validate a JSON document or a mapping; raise InvalidRequestError naming the field."""
    try:
        if isinstance(data, str | bytes):
            return ContextRequest.model_validate_json(data)
        return ContextRequest.model_validate(dict(data))
    except ValidationError as exc:
        raise invalid_request_from(exc) from exc


def invalid_request_from(exc: ValidationError) -> InvalidRequestError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = f"{where}: {first['msg']}" if where else str(first["msg"])
    return InvalidRequestError(message, field=where or None)
