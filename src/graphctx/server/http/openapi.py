"""The OpenAPI document: operation ids, tags, examples, headers and problem responses.

Each route takes its documentation from :func:`documented` — a stable ``operationId``, one tag,
an example request (for a body) and response from :mod:`~graphctx.server.http.examples`, the
``X-Trace-Id`` header both ways, and its error statuses as RFC 9457 problems with
``Retry-After`` where it is sent (429, 503) and ``WWW-Authenticate`` on 401. Routes that parse
their own body (to keep the contract's strict JSON validation, and to take JSON or multipart on
one path) declare it here; the schemas they reference are added to ``components`` once.
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from graphctx.server.http.errors import PROBLEM_MEDIA_TYPE
from graphctx.server.http.examples import EXAMPLES, example_of
from graphctx.server.models import (
    TRACE_ID_PATTERN,
    ContextBody,
    IngestRequest,
    Problem,
    SearchRequest,
)

__all__ = ["OPENAPI_SECURITY", "TAGS", "documented", "install_openapi"]

_REF = "#/components/schemas/{model}"
_BODY_MODELS: tuple[type[BaseModel], ...] = (ContextBody, SearchRequest, IngestRequest, Problem)
OPENAPI_SECURITY: list[dict[str, list[str]]] = [{"bearer": []}, {"apiKey": []}]
TAGS: Final = [
    {
        "name": "context",
        "description": "The full contract: evidence bundles, and the chat "
        "messages rendered from them.",
    },
    {
        "name": "identity",
        "description": "Who the API key acts as, and what it may read.",
    },
    {"name": "search", "description": "The simple search form of a project."},
    {"name": "documents", "description": "Ingest, list and delete the documents of a project."},
    {"name": "service", "description": "Probes and metrics; no API key needed."},
]
TRACE_HEADER: Final = {
    "description": "The request's trace id: the one sent in `X-Trace-Id` when it is valid, "
    "otherwise a new one. It is in the response's `trace_id` and in every log line.",
    "schema": {"type": "string", "pattern": TRACE_ID_PATTERN},
}
RETRY_AFTER_HEADER: Final = {
    "description": "Seconds to wait before sending the request again.",
    "schema": {"type": "integer", "minimum": 1},
}
AUTHENTICATE_HEADER: Final = {
    "description": 'The scheme to authenticate with: `Bearer realm="graphctx"`.',
    "schema": {"type": "string"},
}
TRACE_PARAMETER: Final = {
    "name": "X-Trace-Id",
    "in": "header",
    "required": False,
    "description": "Correlate the request with its logs under this id; an invalid one is "
    "replaced by a new id (see the response header).",
    "schema": {"type": "string", "pattern": TRACE_ID_PATTERN},
}
# What each error status means on this API, with the codes its problem may carry.
PROBLEM_STATUSES: Final = {
    400: "The body is not valid JSON or multipart (`malformed_body`).",
    401: "No API key, or one that does not verify (`unauthenticated`).",
    403: "The key may not do this here: write the project, or act for another principal "
    "(`access_denied`, `principal_mismatch`).",
    404: "No such project or document, or one the key may not see: the two are "
    "indistinguishable (`not_found`).",
    409: "The document changed or was re-scoped by another write meanwhile (`document_conflict`).",
    413: "The body is over the service's size limit (`payload_too_large`).",
    415: "The body's Content-Type is not one this operation reads (`unsupported_media_type`).",
    422: "A field is invalid or over a limit, named in `field` (`invalid_request`, "
    "`limit_exceeded`; for an ingest of which nothing could be ingested, `nothing_ingested` "
    "with each document's reason in `errors`).",
    429: "The key is over its request rate (`rate_limited`); retry after `Retry-After` seconds.",
    500: "The service failed, or an operator must act (a damaged store); the cause is logged "
    "under the trace id.",
    503: "The store or the embedder is temporarily unavailable, or the request could not be "
    "finished in time (`retryable`); retry after `Retry-After` seconds.",
}
_JSON = "application/json"


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": _REF.format(model=model.__name__)}


def documented(
    operation_id: str,
    tag: str,
    *errors: int,
    body: type[BaseModel] | None = None,
    multipart: bool = False,
    secured: bool = True,
    ok: str = "OK",
    media_type: str = _JSON,
) -> dict[str, Any]:
    """The decorator arguments that document one operation (see the module docstring)."""
    success: dict[str, Any] = {"description": ok, "headers": {"X-Trace-Id": TRACE_HEADER}}
    if media_type != _JSON:
        success["content"] = {media_type: {"schema": {"type": "string"}}}
    extra: dict[str, Any] = {"parameters": [TRACE_PARAMETER]}
    if secured:
        extra["security"] = OPENAPI_SECURITY
    if body is not None:
        content: dict[str, Any] = {_JSON: {"schema": _ref(body)}}
        if multipart:
            content["multipart/form-data"] = {"schema": UPLOAD_FORM}
        extra["requestBody"] = {"required": True, "content": content}
    return {
        "operation_id": operation_id,
        "tags": [tag],
        "responses": {200: success, **problems(*errors)},
        "openapi_extra": extra,
    }


def _json(example: BaseModel | dict[str, str] | str) -> Any:
    return example_of(example) if isinstance(example, BaseModel) else example


def _add_examples(schema: dict[str, Any]) -> None:
    """Each operation's example request and response, set after the document is encoded (which
    drops null values: an example keeps the nulls the service sends)."""
    for item in schema["paths"].values():
        for operation in item.values():
            request_example, response_example = EXAMPLES[operation["operationId"]]
            for media in operation["responses"]["200"]["content"].values():
                media["example"] = _json(response_example)
            if request_example is not None:
                operation["requestBody"]["content"][_JSON]["example"] = _json(request_example)


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Response docs for error statuses, all ``application/problem+json`` Problems."""
    return {status: _problem_response(status) for status in statuses}


def _problem_response(status: int) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Trace-Id": TRACE_HEADER}
    if status in (429, 503):
        headers["Retry-After"] = RETRY_AFTER_HEADER
    if status == 401:
        headers["WWW-Authenticate"] = AUTHENTICATE_HEADER
    return {
        "description": PROBLEM_STATUSES[status],
        "headers": headers,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": _ref(Problem)}},
    }


UPLOAD_FORM: Final = {
    "type": "object",
    "description": "Files to ingest, read like `graphctx ingest` reads a folder (type by "
    "extension; `<file>.meta.yaml` sidecars sit next to their file). Any other field name is "
    "refused with an error naming these.",
    "required": ["files"],
    "properties": {
        "files": {
            "type": "array",
            "items": {"type": "string", "format": "binary"},
            "description": "The files: repeat the `files` field once per file; each file's "
            "name (a relative path) is its document id and origin in the report.",
        },
        "scopes": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The scopes of every file that sets none (repeat the field, or "
            "separate scopes with commas); each must be a scope the key holds.",
        },
        "source_version": {
            "type": "string",
            "description": "The version of every file that sets none of its own.",
        },
    },
}


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
            tags=TAGS,
        )
        _add_examples(schema)
        components = schema.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        _, defs = models_json_schema(
            [(model, "validation") for model in _BODY_MODELS], ref_template=_REF
        )
        for name, definition in defs.get("$defs", {}).items():
            schemas.setdefault(name, definition)
        components["securitySchemes"] = {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "`Authorization: Bearer <API key>`.",
            },
            "apiKey": {
                "type": "apiKey",
                "in": "header",
                "name": "X-API-Key",
                "description": "The API key in the `X-API-Key` header.",
            },
        }
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
