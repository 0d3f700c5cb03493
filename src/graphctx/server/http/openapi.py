"""OpenAPI additions: bodies the routes read themselves, problem responses, security schemes.

Routes that parse their own body (to keep the contract's strict JSON validation, and to take
JSON or multipart on one path) declare it with :func:`json_body` / :func:`ingest_body`; the
schemas they reference are added to ``components`` here, once.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from graphctx.contract import ContextRequest
from graphctx.server.http.errors import PROBLEM_MEDIA_TYPE
from graphctx.server.models import IngestRequest, Problem, SearchRequest

__all__ = ["OPENAPI_SECURITY", "ingest_body", "install_openapi", "json_body", "problems"]

_REF = "#/components/schemas/{model}"
_BODY_MODELS: tuple[type[BaseModel], ...] = (ContextRequest, SearchRequest, IngestRequest, Problem)
OPENAPI_SECURITY: list[dict[str, list[str]]] = [{"bearer": []}, {"apiKey": []}]


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": _REF.format(model=model.__name__)}


def json_body(model: type[BaseModel]) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _ref(model)}},
        },
        "security": OPENAPI_SECURITY,
    }


def ingest_body() -> dict[str, Any]:
    multipart = {
        "type": "object",
        "required": ["files"],
        "properties": {
            "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
            "scopes": {"type": "array", "items": {"type": "string"}},
            "source_version": {"type": "string"},
        },
    }
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": _ref(IngestRequest)},
                "multipart/form-data": {"schema": multipart},
            },
        },
        "security": OPENAPI_SECURITY,
    }


def secured() -> dict[str, Any]:
    return {"security": OPENAPI_SECURITY}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Response docs for error statuses, all ``application/problem+json`` Problems."""
    return {
        status: {
            "description": "Problem details (RFC 9457)",
            "content": {PROBLEM_MEDIA_TYPE: {"schema": _ref(Problem)}},
        }
        for status in statuses
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
        )
        components = schema.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        _, defs = models_json_schema(
            [(model, "validation") for model in _BODY_MODELS], ref_template=_REF
        )
        for name, definition in defs.get("$defs", {}).items():
            schemas.setdefault(name, definition)
        components["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer"},
            "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        }
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
