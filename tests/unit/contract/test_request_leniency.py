"""Python construction of a ContextRequest is lenient where nothing is lost; JSON stays strict."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.contract.parsing import parse_request
from graphctx.errors import InvalidRequestError

BASE: dict[str, Any] = {"query": "how to restart", "principal_id": "sam", "allowed_scopes": ["eng"]}


def build(**changes: Any) -> ContextRequest:
    return ContextRequest(**{**BASE, **changes})


@pytest.mark.parametrize("mode", list(RetrievalMode))
def test_python_takes_a_retrieval_mode_by_value_or_by_name(mode: RetrievalMode) -> None:
    assert build(retrieval_mode=mode.value).retrieval_mode is mode
    assert build(retrieval_mode=mode.name).retrieval_mode is mode
    assert build(retrieval_mode=mode).retrieval_mode is mode


@pytest.mark.parametrize(
    "scopes",
    [
        ("eng", "ops"),
        ["ops", "eng"],
        {"ops", "eng"},
        frozenset({"eng", "ops"}),
        ("ops", "eng", "ops"),
    ],
)
def test_python_takes_any_collection_of_scopes_as_one_sorted_list(
    scopes: Collection[str],
) -> None:
    assert build(allowed_scopes=scopes).allowed_scopes == ["eng", "ops"]


@given(st.sets(st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True), min_size=1, max_size=8))
def test_scopes_normalise_the_same_whatever_the_collection(scopes: set[str]) -> None:
    as_list = build(allowed_scopes=sorted(scopes, reverse=True)).allowed_scopes
    assert build(allowed_scopes=tuple(scopes)).allowed_scopes == as_list
    assert build(allowed_scopes=scopes).allowed_scopes == as_list
    assert as_list == sorted(scopes)


def test_python_takes_an_integral_float_for_the_budgets() -> None:
    request = build(max_tokens=600.0, timeout_ms=2500.0)
    assert (request.max_tokens, request.timeout_ms) == (600, 2500)
    assert type(request.max_tokens) is int


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"max_tokens": 600.5}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": "600"}, "max_tokens"),
        ({"max_tokens": float("nan")}, "max_tokens"),
        ({"timeout_ms": float("inf")}, "timeout_ms"),
        ({"max_tokens": 0.0}, "max_tokens"),
        ({"retrieval_mode": "Hybrid"}, "retrieval_mode"),
        ({"retrieval_mode": "telepathy"}, "retrieval_mode"),
        ({"retrieval_mode": 1}, "retrieval_mode"),
        ({"allowed_scopes": "eng"}, "allowed_scopes"),
        ({"allowed_scopes": b"eng"}, "allowed_scopes"),
        ({"allowed_scopes": {"eng": True}}, "allowed_scopes"),
        ({"allowed_scopes": ()}, "allowed_scopes"),
        ({"allowed_scopes": ("has space",)}, "allowed_scopes"),
    ],
)
def test_python_still_refuses_what_would_lose_or_guess(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        build(**changes)
    assert {str(e["loc"][0]) for e in caught.value.errors()} == {field}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"max_tokens": 600.0}, "max_tokens"),
        ({"timeout_ms": 2500.0}, "timeout_ms"),
        ({"retrieval_mode": "HYBRID"}, "retrieval_mode"),
        ({"allowed_scopes": "eng"}, "allowed_scopes"),
    ],
)
def test_json_stays_strict(changes: dict[str, Any], field: str) -> None:
    body = json.dumps({**BASE, **changes})
    with pytest.raises(ValidationError) as caught:
        ContextRequest.model_validate_json(body)
    assert {str(e["loc"][0]) for e in caught.value.errors()} == {field}
    with pytest.raises(InvalidRequestError) as refused:
        parse_request(body)
    assert refused.value.field == field


def test_json_accepts_what_it_accepted_before() -> None:
    request = ContextRequest.model_validate_json(
        json.dumps({**BASE, "retrieval_mode": "hybrid", "allowed_scopes": ["ops", "eng", "ops"]})
    )
    assert request.retrieval_mode is RetrievalMode.HYBRID
    assert request.allowed_scopes == ["eng", "ops"]


def test_leniency_leaves_the_json_schema_as_it_was() -> None:
    schema = ContextRequest.model_json_schema()
    properties = schema["properties"]
    assert properties["max_tokens"]["type"] == "integer"
    assert properties["allowed_scopes"]["type"] == "array"
    assert properties["retrieval_mode"] == {
        "$ref": "#/$defs/RetrievalMode",
        "default": "auto",
        "description": properties["retrieval_mode"]["description"],
    }
