"""The HTTP service over a real socket: contract, search, documents, problems, observability."""

from __future__ import annotations

import json
import logging
import threading

import httpx
import pytest

from graphctx.contract import ContextRequest, ContextResponse
from graphctx.server.logs import JsonFormatter
from graphctx.server.models import (
    DeleteResult,
    IngestResult,
    Problem,
    SearchResponse,
    SourceList,
)
from graphctx.testing.service import ALPHA_SECRET_MARKER, Harness


def context_body(**overrides: object) -> dict[str, object]:
    body: dict[str, object] = {
        "query": "how do I roll back a deploy",
        "principal_id": "rita",
        "allowed_scopes": ["public"],
        "namespace": "alpha",
        "max_tokens": 400,
    }
    body.update(overrides)
    return body


def problem_of(response: httpx.Response) -> Problem:
    assert response.headers["content-type"] == "application/problem+json", response.text
    problem = Problem.model_validate_json(response.text)
    assert problem.status == response.status_code
    assert problem.type == f"urn:graphctx:problem:{problem.code}"
    assert "Traceback" not in response.text
    return problem


def test_context_returns_a_bundle_from_the_callers_scopes_only(harness: Harness) -> None:
    with harness.client("rita") as http:
        response = http.post("/v1/context", json=context_body())
    assert response.status_code == 200, response.text
    bundle = ContextResponse.model_validate_json(response.text)
    assert bundle.answerable
    assert {item.document_id for item in bundle.items} == {"alpha-runbook"}
    assert response.headers["x-trace-id"] == bundle.trace_id
    assert bundle.limits.used_tokens <= 400
    assert ALPHA_SECRET_MARKER not in response.text


def test_a_trace_id_in_the_body_is_the_trace_id_of_the_response(harness: Harness) -> None:
    with harness.client("rita") as http:
        response = http.post("/v1/context", json=context_body(trace_id="trace-abc.1"))
    assert response.status_code == 200
    assert response.json()["trace_id"] == "trace-abc.1"
    assert response.headers["x-trace-id"] == "trace-abc.1"


def test_a_wider_grant_sees_the_secret_so_the_negative_tests_mean_something(
    harness: Harness,
) -> None:
    with harness.client("ada") as http:
        wide = http.post(
            "/v1/context",
            json=context_body(
                principal_id="ada",
                allowed_scopes=["public", "secret"],
                query="payroll deploy rollback manual run code",
            ),
        )
        narrowed = http.post(
            "/v1/context",
            json=context_body(principal_id="rita", query="payroll deploy rollback manual run code"),
        )
    assert wide.status_code == 200
    assert ALPHA_SECRET_MARKER in wide.text
    assert narrowed.status_code == 200  # ada may impersonate; rita's scopes only narrow
    assert ALPHA_SECRET_MARKER not in narrowed.text


def test_search_returns_content_source_score_and_provenance(harness: Harness) -> None:
    with harness.client("rita") as http:
        response = http.post(
            "/v1/projects/alpha/search", json={"query": "roll back a deploy", "limit": 1}
        )
    assert response.status_code == 200, response.text
    result = SearchResponse.model_validate_json(response.text)
    assert result.answerable
    assert len(result.results) == 1
    hit = result.results[0]
    assert hit.document_id == "alpha-runbook"
    assert hit.source.endswith("runbook.md")
    assert hit.score > 0
    assert hit.citation_id == "S1"
    assert [step.kind.value for step in hit.provenance_path] == ["Document", "Chunk"]
    assert hit.freshness.value in {"current", "unknown"}


def test_listing_shows_only_the_documents_the_caller_may_see(harness: Harness) -> None:
    with harness.client("rita") as rita, harness.client("ada") as ada:
        mine = SourceList.model_validate_json(rita.get("/v1/projects/alpha/documents").text)
        wider = SourceList.model_validate_json(ada.get("/v1/projects/alpha/documents").text)
    assert {d.document_id for d in mine.documents} == {"alpha-runbook"}
    assert {d.document_id for d in wider.documents} == {"alpha-runbook", "alpha-payroll"}


def test_every_error_is_problem_json_with_a_stable_code(harness: Harness) -> None:
    with harness.client("rita") as http, harness.client() as anonymous:
        seen = {
            "malformed": http.post(
                "/v1/context", content=b"{nope", headers={"content-type": "application/json"}
            ),
            "media": http.post(
                "/v1/context", content=b"query=x", headers={"content-type": "text/plain"}
            ),
            "invalid": http.post("/v1/context", json=context_body(query="")),
            "unknown_field": http.post("/v1/context", json=context_body(admin=True)),
            "anonymous": anonymous.post("/v1/context", json=context_body()),
            "principal": http.post("/v1/context", json=context_body(principal_id="ada")),
            "project": http.post("/v1/context", json=context_body(namespace="beta")),
            "route": http.get("/v1/nothing-here"),
            "method": http.put("/v1/context"),
        }
    codes = {name: (r.status_code, problem_of(r).code) for name, r in seen.items()}
    assert codes == {
        "malformed": (400, "malformed_body"),
        "media": (415, "unsupported_media_type"),
        "invalid": (422, "invalid_request"),
        "unknown_field": (422, "invalid_request"),
        "anonymous": (401, "unauthenticated"),
        "principal": (403, "principal_mismatch"),
        "project": (404, "not_found"),
        "route": (404, "not_found"),
        "method": (405, "method_not_allowed"),
    }
    assert seen["anonymous"].headers["www-authenticate"].startswith("Bearer")
    assert problem_of(seen["invalid"]).field == "query"


def test_configured_caps_are_clear_422s(harness: Harness) -> None:
    with harness.client("rita") as http:
        tokens = http.post("/v1/context", json=context_body(max_tokens=50_000))
        timeout = http.post("/v1/context", json=context_body(timeout_ms=60_000))
        limit = http.post("/v1/projects/alpha/search", json={"query": "deploy", "limit": 400})
    # The query's length has one limit, the contract's: test_http_traps.py.
    fields = {problem_of(r).field for r in (tokens, timeout, limit)}
    assert {r.status_code for r in (tokens, timeout, limit)} == {422}
    assert {problem_of(r).code for r in (tokens, timeout, limit)} == {"limit_exceeded"}
    assert fields == {"max_tokens", "timeout_ms", "limit"}


def test_ingest_search_delete_round_trip(harness: Harness) -> None:
    document = {
        "document_id": "quokka-migration",
        "text": "The quokka migration moves the ledger to the new cluster in three waves.",
        "scopes": ["public"],
        "source_version": "7",
        "title": "Quokka migration",
        "valid_from": "2026-01-01T00:00:00Z",
        "metadata": {"owner": "team-ledger"},
    }
    with harness.client("wes") as http:
        ingested = http.post("/v1/projects/gamma/documents", json={"documents": [document]})
        assert ingested.status_code == 200, ingested.text
        report = IngestResult.model_validate_json(ingested.text)
        assert [(d.document_id, d.outcome.value) for d in report.documents] == [
            ("quokka-migration", "added")
        ]
        assert report.errors == []
        found = SearchResponse.model_validate_json(
            http.post("/v1/projects/gamma/search", json={"query": "quokka migration"}).text
        )
        assert [r.document_id for r in found.results] == ["quokka-migration"]
        assert found.results[0].source == "quokka-migration"
        deleted = http.delete("/v1/projects/gamma/documents/quokka-migration")
        assert DeleteResult.model_validate_json(deleted.text).deleted_versions >= 1
        gone = SearchResponse.model_validate_json(
            http.post("/v1/projects/gamma/search", json={"query": "quokka migration"}).text
        )
        again = http.delete("/v1/projects/gamma/documents/quokka-migration")
    assert gone.results == []
    assert (again.status_code, problem_of(again).code) == (404, "not_found")


def test_uploaded_files_go_through_the_file_loaders(harness: Harness) -> None:
    files = [
        (
            "files",
            (
                "notes/wombat.md",
                b"---\ndocument_id: wombat-notes\nscopes: [drafts]\n---\n"
                b"# Wombat notes\n\nWombats dig burrows with their strong claws.\n",
                "text/markdown",
            ),
        ),
        ("files", ("notes/wombat.md.meta.yaml", b"source_version: '2'\n", "text/yaml")),
        ("files", ("plain.txt", b"The platypus service lays eggs on Tuesdays.\n", "text/plain")),
        ("files", ("blob.txt", b"\x00\x01binary", "application/octet-stream")),
        ("files", ("../escape.md", b"# nope\n", "text/markdown")),
        ("files", ("secret.md", b"---\nscopes: [secret]\n---\nclassified\n", "text/markdown")),
    ]
    with harness.client("wes") as http:
        response = http.post("/v1/projects/gamma/documents", files=files, data={"scopes": "public"})
        listing = SourceList.model_validate_json(http.get("/v1/projects/gamma/documents").text)
    assert response.status_code == 200, response.text
    report = IngestResult.model_validate_json(response.text)
    written = {d.document_id: d for d in report.documents}
    assert set(written) == {"wombat-notes", "plain.txt"}
    assert written["wombat-notes"].version == "2"  # the sidecar was applied
    errors = {(e.origin, e.code) for e in report.errors}
    assert errors == {
        ("blob.txt", "binary_file"),
        ("files[4]", "invalid_filename"),
        ("secret.md", "scope_not_granted"),
    }
    assert "/tmp" not in response.text
    assert {"wombat-notes", "plain.txt"} <= {d.document_id for d in listing.documents}


def test_writers_only_touch_documents_inside_their_scopes(harness: Harness) -> None:
    hijack = {
        "documents": [{"document_id": "alpha-payroll", "text": "overwritten", "scopes": ["public"]}]
    }
    with harness.client("wes") as wes, harness.client("rita") as rita:
        conflict = wes.post("/v1/projects/alpha/documents", json=hijack)
        hidden_delete = wes.delete("/v1/projects/alpha/documents/alpha-payroll")
        reader_write = rita.post("/v1/projects/alpha/documents", json=hijack)
        reader_delete = rita.delete("/v1/projects/alpha/documents/alpha-runbook")
        other_project = rita.post("/v1/projects/beta/documents", json=hijack)
    # Nothing was ingested, so the answer is a 422 problem listing each refusal (issue 15).
    refused = problem_of(conflict)
    assert (conflict.status_code, refused.code) == (422, "nothing_ingested")
    assert [(e.code, e.origin) for e in refused.errors or []] == [
        ("document_id_conflict", "documents[0]")
    ]
    assert (hidden_delete.status_code, problem_of(hidden_delete).code) == (404, "not_found")
    assert (reader_write.status_code, problem_of(reader_write).code) == (403, "write_denied")
    assert (reader_delete.status_code, problem_of(reader_delete).code) == (403, "write_denied")
    assert (other_project.status_code, problem_of(other_project).code) == (404, "not_found")
    with harness.client("ada") as ada:
        still = ada.post(
            "/v1/context",
            json=context_body(
                principal_id="ada", allowed_scopes=["secret"], query="payroll manual run code"
            ),
        )
    assert ALPHA_SECRET_MARKER in still.text


def test_probes_and_metrics(harness: Harness) -> None:
    with harness.client() as anonymous:
        health = anonymous.get("/healthz")
        ready = anonymous.get("/readyz")
        metrics = anonymous.get("/metrics")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    text = metrics.text
    assert 'graphctx_stage_duration_seconds_count{stage="candidates.fulltext"' in text
    assert "graphctx_results_per_response_bucket" in text
    assert 'graphctx_errors_total{code="not_found"}' in text
    assert 'graphctx_http_requests_total{method="POST",route="/v1/context"' in text
    assert ALPHA_SECRET_MARKER not in text


def test_the_openapi_request_schema_is_the_contract(harness: Harness) -> None:
    with harness.client() as anonymous:
        spec = anonymous.get("/openapi.json").json()
    # the wire body carries exactly the contract's fields; only the question is required
    # (principal and scopes default from the key: issue 15)
    body = spec["components"]["schemas"]["ContextBody"]
    assert body["properties"].keys() == ContextRequest.model_json_schema()["properties"].keys()
    assert body["required"] == ["query"]
    assert set(spec["paths"]) == {
        "/v1/context",
        "/v1/context/messages",
        "/v1/projects/{project_id}/search",
        "/v1/projects/{project_id}/documents",
        "/v1/projects/{project_id}/documents/{document_id}",
        "/v1/whoami",
        "/healthz",
        "/readyz",
        "/metrics",
    }


class _Capture(logging.Handler):
    def __init__(self, trace_id: str) -> None:
        super().__init__()
        self.trace_id = trace_id
        self.lines: list[str] = []
        self.seen = threading.Event()
        self.setFormatter(JsonFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        line = self.format(record)
        self.lines.append(line)
        if json.loads(line).get("trace_id") == self.trace_id:
            self.seen.set()


@pytest.fixture
def access_log() -> tuple[logging.Logger, str]:
    return logging.getLogger("graphctx.access"), "log-trace-42"


def test_access_logs_are_json_lines_with_the_trace_id(
    harness: Harness, access_log: tuple[logging.Logger, str]
) -> None:
    logger, trace_id = access_log
    capture = _Capture(trace_id)
    logger.addHandler(capture)
    logger.setLevel(logging.INFO)
    try:
        with harness.client("rita", **{"X-Trace-Id": trace_id}) as http:
            http.get("/v1/projects/alpha/documents")
        assert capture.seen.wait(10)
    finally:
        logger.removeHandler(capture)
    entry = next(
        json.loads(line) for line in capture.lines if json.loads(line).get("trace_id") == trace_id
    )
    assert entry["route"] == "/v1/projects/{project_id}/documents"
    assert entry["status"] == 200
    assert entry["subject"] == "key:rita"
