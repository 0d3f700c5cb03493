"""JSON ``metadata`` cannot stand in for the fields that decide identity and visibility.

``DocumentIn._no_reserved_keys`` refuses, as a typed 422, any ``metadata`` key that names a
document field (``scopes``, ``document_id``, …): a writer must not reach a field through the
free-form bag that the typed fields would check. Keys that only look like them (other case,
other spelling) are accepted as plain metadata and change nothing about who sees the document.
"""

from __future__ import annotations

import dataclasses

import pytest

from graphctx.ingest.source import DocumentMetadata
from graphctx.server.models import IngestResult, Problem, SearchResponse
from graphctx.testing.service import Harness

RESERVED_KEYS = sorted(f.name for f in dataclasses.fields(DocumentMetadata) if f.name != "extra")
RESERVED_VALUES: dict[str, str] = {
    "scopes": "public",
    "document_id": "alpha-payroll",
    "source_uri": "javascript:alert(1)",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "valid_from": "2026-01-01T00:00:00Z",
    "valid_to": "2026-01-01T00:00:00Z",
}
LOOKALIKE_KEYS = {"Scopes": "public", "SCOPES": "public", "scope": "public", "acl": "public"}
WORD = "xylocarp"  # a word no other document in the shared corpus holds: it ranks first


def test_the_reserved_set_is_every_document_field() -> None:
    """Guards the parametrised test below: a new field must be refused in metadata too."""
    assert set(RESERVED_KEYS) >= {"scopes", "document_id", "source_uri", "source_version"}


@pytest.mark.parametrize("key", RESERVED_KEYS)
def test_a_reserved_metadata_key_is_refused_with_a_typed_422_and_nothing_is_written(
    harness: Harness, key: str
) -> None:
    document_id = f"reserved-{key}"
    document = {
        "document_id": document_id,
        "text": f"The {WORD} note names the reserved key {key}.",
        "scopes": ["drafts"],
        "metadata": {key: RESERVED_VALUES.get(key, "forged")},
    }
    with harness.client("wes") as wes:
        response = wes.post("/v1/projects/alpha/documents", json={"documents": [document]})
        listed = wes.get("/v1/projects/alpha/documents").text
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = Problem.model_validate_json(response.text)
    assert (problem.code, problem.field) == ("invalid_request", "documents.0.metadata")
    assert key in problem.detail
    assert document_id not in listed


def test_lookalike_keys_are_inert_metadata_that_never_widen_visibility(harness: Harness) -> None:
    document = {
        "document_id": "lookalike-scopes",
        "text": f"The {WORD} draft is for the drafts scope only.",
        "scopes": ["drafts"],
        "metadata": LOOKALIKE_KEYS,
    }
    with harness.client("wes") as wes, harness.client("rita") as rita:
        written = wes.post("/v1/projects/alpha/documents", json={"documents": [document]})
        try:
            assert written.status_code == 200, written.text
            report = IngestResult.model_validate_json(written.text)
            assert [d.document_id for d in report.documents] == ["lookalike-scopes"]
            seen_by_writer = SearchResponse.model_validate_json(
                wes.post("/v1/projects/alpha/search", json={"query": WORD}).text
            )
            seen_by_reader = rita.post("/v1/projects/alpha/search", json={"query": WORD})
        finally:
            wes.delete("/v1/projects/alpha/documents/lookalike-scopes")
    assert seen_by_writer.results[0].document_id == "lookalike-scopes"
    assert seen_by_reader.status_code == 200, seen_by_reader.text
    reader_results = SearchResponse.model_validate_json(seen_by_reader.text).results
    assert "lookalike-scopes" not in {r.document_id for r in reader_results}
    assert "drafts scope only" not in seen_by_reader.text
