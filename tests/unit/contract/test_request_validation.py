from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode
from graphctx.contract.request import MAX_QUERY_CHARS

VALID: dict[str, Any] = {
    "query": "how to restart",
    "principal_id": "sam",
    "allowed_scopes": ["eng"],
}


def parse(**changes: Any) -> ContextRequest:
    return ContextRequest.model_validate_json(json.dumps({**VALID, **changes}))


def test_a_minimal_request_gets_defaults_and_a_trace_id() -> None:
    request = parse()
    assert request.retrieval_mode is RetrievalMode.AUTO
    assert request.namespace == "default"
    assert len(request.trace_id) == 32


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, "query"),
        ({"query": "bad\x00query"}, "query"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": -5}, "max_tokens"),
        ({"timeout_ms": 0}, "timeout_ms"),
        ({"retrieval_mode": "telepathy"}, "retrieval_mode"),
        ({"freshness_required_at": "yesterday"}, "freshness_required_at"),
        ({"freshness_required_at": "2026-01-01T00:00:00"}, "freshness_required_at"),
        ({"allowed_scopes": []}, "allowed_scopes"),
        ({"allowed_scopes": ["has space"]}, "allowed_scopes"),
        ({"namespace": "../etc"}, "namespace"),
        ({"unexpected": 1}, "unexpected"),
        ({"max_tokens": "100"}, "max_tokens"),
    ],
)
def test_invalid_requests_are_rejected_naming_the_field(
    changes: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        parse(**changes)
    assert {str(e["loc"][0]) for e in caught.value.errors()} == {field}


def test_json_schemas_are_exported_for_both_models() -> None:
    request_schema = ContextRequest.model_json_schema()
    response_schema = ContextResponse.model_json_schema()
    assert request_schema["additionalProperties"] is False
    assert set(request_schema["required"]) == {"query", "principal_id", "allowed_scopes"}
    assert "items" in response_schema["properties"]
