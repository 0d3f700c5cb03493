"""What routes read from the app and the request: services, the identity, bodies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Path
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from graphctx.contract.parsing import invalid_request_from
from graphctx.errors import GraphctxError
from graphctx.server.auth import Identity
from graphctx.server.config import ServiceSettings
from graphctx.server.errors import (
    AuthenticationError,
    MalformedBodyError,
    UnsupportedMediaTypeError,
)
from graphctx.server.logs import current_trace_id
from graphctx.server.metrics import Metrics
from graphctx.server.service import GraphctxService

__all__ = [
    "AppServices",
    "DocumentIdPath",
    "ProjectId",
    "identity_of",
    "media_type",
    "parse_body",
    "read_json",
    "services_of",
    "set_trace_id",
    "trace_id_of",
]

M = TypeVar("M", bound=BaseModel)
ProjectId = Annotated[str, Path(description="The project (namespace) id, e.g. `alpha`.")]
DocumentIdPath = Annotated[
    str, Path(description="The document's id; it may contain `/` (a relative path).")
]


@dataclass(frozen=True)
class AppServices:
    service: GraphctxService
    metrics: Metrics
    settings: ServiceSettings


def services_of(request: Request) -> AppServices:
    services: AppServices = request.app.state.graphctx
    return services


def identity_of(request: Request) -> Identity:
    identity = request.scope.get("state", {}).get("identity")
    if not isinstance(identity, Identity):  # the auth middleware did not run: fail closed
        raise AuthenticationError("an API key is required")
    return identity


def trace_id_of(request: Request) -> str:
    trace_id = request.scope.get("state", {}).get("trace_id")
    return trace_id if isinstance(trace_id, str) else current_trace_id.get() or "unknown"


def set_trace_id(request: Request, trace_id: str) -> None:
    request.scope.setdefault("state", {})["trace_id"] = trace_id
    current_trace_id.set(trace_id)


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def read_json(request: Request) -> bytes:
    """The raw body of a JSON request; 415 for another media type."""
    kind = media_type(request)
    if kind != "application/json" and not kind.endswith("+json"):
        raise UnsupportedMediaTypeError("send the body as application/json")
    return await request.body()


def parse_body(model: type[M], raw: bytes) -> M:
    """Validate a JSON body: 400 when it is not JSON, 422 when it does not fit ``model``."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            raise MalformedBodyError("the body is not valid JSON") from exc
        error: GraphctxError = invalid_request_from(exc)
        raise error from exc
