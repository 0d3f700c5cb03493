"""The served OpenAPI document is complete: every property described, every operation with a
stable operationId, a tag, examples, its headers and its problems (issue 15)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from graphctx.contract import ContextResponse
from graphctx.server.models import (
    ContextBody,
    DeleteResult,
    IngestRequest,
    IngestResult,
    Problem,
    RenderedContext,
    SearchRequest,
    SearchResponse,
    SourceList,
    WhoAmI,
)
from graphctx.testing.service import Harness

METHODS = {"get", "post", "put", "patch", "delete"}
OPERATION_ID = re.compile(r"^[a-z][a-zA-Z0-9]*$")  # camelCase, nothing generated from paths
RESPONSE_MODELS: dict[str, type[BaseModel]] = {
    "retrieveContext": ContextResponse,
    "renderContextMessages": RenderedContext,
    "searchProject": SearchResponse,
    "ingestDocuments": IngestResult,
    "listDocuments": SourceList,
    "deleteDocument": DeleteResult,
    "whoAmI": WhoAmI,
}
REQUEST_MODELS: dict[str, type[BaseModel]] = {
    "retrieveContext": ContextBody,
    "renderContextMessages": ContextBody,
    "searchProject": SearchRequest,
    "ingestDocuments": IngestRequest,
}


@pytest.fixture(scope="module")
def document(harness: Harness) -> dict[str, Any]:
    with harness.client() as http:
        response = http.get("/openapi.json")
    assert response.status_code == 200
    served: dict[str, Any] = response.json()
    return served


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def schemas_in(node: object, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object with properties, anywhere in the document (components, inline
    request bodies and responses), with where it is."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield where, node
        for key, value in node.items():
            if key not in ("example", "examples"):
                yield from schemas_in(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from schemas_in(value, f"{where}/{index}")


def test_every_property_of_every_schema_has_a_description(document: dict[str, Any]) -> None:
    undescribed = [
        f"{where}.{name}"
        for where, schema in schemas_in(document, "#")
        for name, prop in schema["properties"].items()
        if not str(prop.get("description", "")).strip()
    ]
    counted = sum(len(schema["properties"]) for _, schema in schemas_in(document, "#"))
    assert counted > 150
    assert undescribed == []


def test_every_parameter_has_a_description(document: dict[str, Any]) -> None:
    undescribed = [
        f"{method} {path} {parameter['name']}"
        for path, method, operation in operations(document)
        for parameter in operation.get("parameters", [])
        if not parameter.get("description")
    ]
    assert undescribed == []


def test_every_operation_has_a_stable_id_a_declared_tag_and_a_summary(
    document: dict[str, Any],
) -> None:
    declared_tags = {tag["name"] for tag in document["tags"]}
    assert all(tag.get("description") for tag in document["tags"])
    ids = []
    for path, method, operation in operations(document):
        assert OPERATION_ID.fullmatch(operation.get("operationId", "")), (method, path)
        assert operation.get("tags"), (method, path)
        assert set(operation["tags"]) <= declared_tags, (method, path)
        assert operation.get("summary"), (method, path)
        ids.append(operation["operationId"])
    assert len(ids) == len(set(ids)) == 10
    assert {"retrieveContext", "searchProject", "ingestDocuments"} <= set(ids)


def test_every_operation_has_an_example_request_and_response(document: dict[str, Any]) -> None:
    for path, method, operation in operations(document):
        ok = operation["responses"]["200"]["content"]
        assert all("example" in media for media in ok.values()), (method, path)
        body = operation.get("requestBody")
        if body is not None:
            assert "example" in body["content"]["application/json"], (method, path)


def test_the_examples_are_what_the_models_accept(document: dict[str, Any]) -> None:
    checked = 0
    for _, _, operation in operations(document):
        name = operation["operationId"]
        if name in RESPONSE_MODELS:
            example = operation["responses"]["200"]["content"]["application/json"]["example"]
            RESPONSE_MODELS[name].model_validate_json(json.dumps(example))
            checked += 1
        if name in REQUEST_MODELS:
            example = operation["requestBody"]["content"]["application/json"]["example"]
            REQUEST_MODELS[name].model_validate_json(json.dumps(example))  # strict JSON, as served
            checked += 1
    assert checked == len(RESPONSE_MODELS) + len(REQUEST_MODELS)


def test_headers_and_problems_are_declared(document: dict[str, Any]) -> None:
    problem_ref = "#/components/schemas/Problem"
    for path, method, operation in operations(document):
        params = {p["name"] for p in operation.get("parameters", []) if p["in"] == "header"}
        assert "X-Trace-Id" in params, (method, path)
        for status, response in operation["responses"].items():
            headers = response.get("headers", {})
            assert "X-Trace-Id" in headers, (method, path, status)
            assert response.get("description"), (method, path, status)
            if status in ("429", "503"):
                assert "Retry-After" in headers, (method, path, status)
            if status == "401":
                assert "WWW-Authenticate" in headers, (method, path, status)
            if int(status) >= 400:
                content = response["content"]
                assert content == {"application/problem+json": {"schema": {"$ref": problem_ref}}}
        if operation.get("security"):
            assert {"401", "429"} <= set(operation["responses"]), (method, path)
    problem = document["components"]["schemas"]["Problem"]
    assert set(Problem.model_fields) == set(problem["properties"])


def test_the_upload_field_is_documented(document: dict[str, Any]) -> None:
    operation = document["paths"]["/v1/projects/{project_id}/documents"]["post"]
    form = operation["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert form["required"] == ["files"]
    assert "`files`" in form["properties"]["files"]["description"]
    assert "`files`" in operation["description"]


def test_whoami_and_the_optional_identity_of_the_context_body_are_documented(
    document: dict[str, Any],
) -> None:
    whoami = document["paths"]["/v1/whoami"]["get"]
    assert whoami["operationId"] == "whoAmI"
    assert whoami["tags"] == ["identity"]
    assert whoami["security"]
    body = document["components"]["schemas"]["ContextBody"]
    assert body["required"] == ["query"]
    example = document["paths"]["/v1/context"]["post"]["requestBody"]["content"][
        "application/json"
    ]["example"]
    assert "principal_id" not in example
    assert "allowed_scopes" not in example
