"""Request models on random JSON: a valid model or one typed error, never anything else."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from json_strategies import JSON_VALUES, encode, near_valid, raw_bodies
from profiles import fuzz_settings
from pydantic import BaseModel, ValidationError

from graphctx.contract import ContextRequest
from graphctx.contract.parsing import parse_request
from graphctx.errors import InvalidRequestError
from graphctx.server.http.uploads import batch_from_json
from graphctx.server.models import IngestRequest, SearchRequest

VALID_REQUEST = {
    "query": "How do I restart the gateway?",
    "principal_id": "sam",
    "allowed_scopes": ["eng"],
    "namespace": "acme",
    "retrieval_mode": "auto",
    "max_tokens": 800,
    "timeout_ms": 2_000,
    "freshness_required_at": "2026-01-01T00:00:00+00:00",
    "trace_id": "trace-1",
}
VALID_SEARCH = {"query": "restart", "limit": 5, "allowed_scopes": ["public"]}
VALID_DOCUMENT = {
    "document_id": "doc-1",
    "text": "---\ntitle: Front\ncreated_at: 2026-01-01\n---\nBody text.",
    "media_type": "markdown",
    "scopes": ["public"],
    "created_at": "2026-01-01T00:00:00+09:00",
    "valid_to": "2027-01-01T00:00:00Z",
    "metadata": {"owner": "ops"},
}


def assert_request_or_typed_error(data: object) -> None:
    error: InvalidRequestError | None = None
    try:
        request = parse_request(data)  # type: ignore[arg-type]  # a mapping of random JSON
    except InvalidRequestError as exc:
        error = exc
    if error is not None:
        assert (error.code, bool(error.message)) == ("invalid_request", True)
        return
    assert isinstance(request, ContextRequest)
    assert request.allowed_scopes == sorted(set(request.allowed_scopes))


@fuzz_settings()
@given(body=raw_bodies(VALID_REQUEST))
def test_random_json_text_parses_to_a_request_or_one_typed_error(body: bytes) -> None:
    assert_request_or_typed_error(body)
    assert_request_or_typed_error(body.decode("utf-8", "replace"))


@fuzz_settings()
@given(data=near_valid(VALID_REQUEST) | st.dictionaries(st.text(max_size=12), JSON_VALUES))
def test_random_mappings_parse_to_a_request_or_one_typed_error(data: dict[str, object]) -> None:
    assert_request_or_typed_error(data)


@pytest.mark.parametrize("model", [SearchRequest, IngestRequest])
@fuzz_settings(share=0.5)
@given(data=st.data())
def test_server_models_validate_or_raise_a_validation_error(
    model: type[BaseModel], data: st.DataObject
) -> None:
    valid = VALID_SEARCH if model is SearchRequest else {"documents": [VALID_DOCUMENT]}
    body = data.draw(raw_bodies(valid))
    with contextlib.suppress(ValidationError):  # the one error allowed; anything else fails
        model.model_validate_json(body)


@fuzz_settings()
@given(document=near_valid(VALID_DOCUMENT), scopes=st.lists(st.sampled_from(("public", "x"))))
def test_json_documents_become_sources_or_per_document_typed_errors(
    document: dict[str, object], scopes: list[str]
) -> None:
    """What ``POST /documents`` does after validation: front matter and metadata are read
    here, so an unexpected exception would be a 500 (``created_at`` at year 1 with a
    positive offset, or a 5,000-digit metadata number, both were)."""
    try:
        body = IngestRequest.model_validate_json(
            encode({"documents": [document], "scopes": scopes})
        )
    except ValidationError:
        return
    batch = batch_from_json(body)
    assert len(batch.sources) + len(batch.rejected) == 1
    for rejected in batch.rejected:
        assert (bool(rejected.code), bool(rejected.message)) == (True, True)
    for source in batch.sources:
        assert source.text.strip()


def test_the_valid_bodies_are_valid_so_mutations_start_from_accepted_requests() -> None:
    assert parse_request(encode(VALID_REQUEST)).namespace == "acme"
    assert SearchRequest.model_validate(VALID_SEARCH).limit == 5
    batch = batch_from_json(IngestRequest.model_validate({"documents": [VALID_DOCUMENT]}))
    assert (len(batch.sources), batch.rejected) == (1, [])
