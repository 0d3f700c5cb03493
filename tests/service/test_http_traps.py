"""Traps a newcomer hit over HTTP (issue 15): two query-length limits with two errors, a 200
for an upload of which nothing was ingested, an undocumented upload field, a blank /docs
offline — and the JSON contract that must stay strict while Python construction is lenient."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx
import pytest

from graphctx.contract import MAX_QUERY_CHARS
from graphctx.server.models import IngestResult, Problem, SourceList
from graphctx.testing.service import Harness

WRITABLE = "gamma"  # a project wes may write


def problem_of(response: httpx.Response) -> Problem:
    assert response.headers["content-type"] == "application/problem+json", response.text
    problem = Problem.model_validate_json(response.text)
    assert problem.status == response.status_code
    return problem


def context_body(query: str, **overrides: object) -> dict[str, object]:
    return {
        "query": query,
        "principal_id": "rita",
        "allowed_scopes": ["public"],
        "namespace": "alpha",
        "max_tokens": 400,
        **overrides,
    }


def long_query(chars: int) -> str:
    return ("roll back a deploy " * (chars // 19 + 1))[:chars]


def test_a_query_within_the_contract_limit_is_served_on_every_route(harness: Harness) -> None:
    query = long_query(3_000)  # was limit_exceeded "cap of 2000"
    with harness.client("rita") as http:
        context = http.post("/v1/context", json=context_body(query))
        search = http.post("/v1/projects/alpha/search", json={"query": query})
    assert (context.status_code, search.status_code) == (200, 200), (context.text, search.text)


@pytest.mark.parametrize("chars", [MAX_QUERY_CHARS + 1, 100_000])
def test_a_query_over_the_limit_gets_one_error_whatever_its_length_or_route(
    harness: Harness, chars: int
) -> None:
    query = long_query(chars)
    with harness.client("rita") as http:
        answers = [
            http.post("/v1/context", json=context_body(query)),
            http.post("/v1/context/messages", json=context_body(query)),
            http.post("/v1/projects/alpha/search", json={"query": query}),
        ]
    seen = {(r.status_code, p.code, p.field, p.detail) for r in answers for p in [problem_of(r)]}
    assert seen == {
        (
            422,
            "invalid_request",
            "query",
            f"query: String should have at most {MAX_QUERY_CHARS} characters",
        )
    }


def test_an_upload_whose_every_file_fails_is_a_422_listing_each_reason(
    harness: Harness,
) -> None:
    files = [
        ("files", ("trap-blob.txt", b"\x00\x01\x02binary\x00", "text/plain")),
        ("files", ("../trap-escape.md", b"# nope\n", "text/markdown")),
        ("files", ("trap-secret.md", b"---\nscopes: [secret]\n---\nclassified\n", "text/markdown")),
    ]
    with harness.client("wes") as http:
        before = SourceList.model_validate_json(http.get(f"/v1/projects/{WRITABLE}/documents").text)
        response = http.post(
            f"/v1/projects/{WRITABLE}/documents", files=files, data={"scopes": "public"}
        )
        after = SourceList.model_validate_json(http.get(f"/v1/projects/{WRITABLE}/documents").text)
    problem = problem_of(response)
    assert (response.status_code, problem.code, problem.retryable) == (
        422,
        "nothing_ingested",
        False,
    )
    assert {(e.origin, e.code) for e in problem.errors or []} == {
        ("trap-blob.txt", "binary_file"),
        ("files[1]", "invalid_filename"),
        ("trap-secret.md", "scope_not_granted"),
    }
    assert after == before  # nothing was written


def test_a_json_ingest_of_which_nothing_is_ingested_is_a_422_too(harness: Harness) -> None:
    body = {"documents": [{"document_id": "trap-blank", "text": "   \n", "scopes": ["public"]}]}
    with harness.client("wes") as http:
        response = http.post(f"/v1/projects/{WRITABLE}/documents", json=body)
    problem = problem_of(response)
    assert (response.status_code, problem.code) == (422, "nothing_ingested")
    assert [(e.origin, e.code) for e in problem.errors or []] == [
        ("documents[0]", "empty_document")
    ]


def test_a_partial_upload_stays_200_and_lists_the_failures(harness: Harness) -> None:
    files = [
        ("files", ("trap-partial.md", b"# Partial\n\nThe quokka ledger closes at noon.\n", "")),
        ("files", ("trap-partial-blob.txt", b"\x00\x00\x00", "text/plain")),
    ]
    with harness.client("wes") as http:
        response = http.post(
            f"/v1/projects/{WRITABLE}/documents", files=files, data={"scopes": "public"}
        )
    assert response.status_code == 200, response.text
    report = IngestResult.model_validate_json(response.text)
    assert [d.document_id for d in report.documents] == ["trap-partial.md"]
    assert [(e.origin, e.code) for e in report.errors] == [("trap-partial-blob.txt", "binary_file")]


@pytest.mark.parametrize("wrong", ["file", "upload", "documents"])
def test_a_wrong_upload_field_is_told_the_right_one(harness: Harness, wrong: str) -> None:
    with harness.client("wes") as http:
        response = http.post(
            f"/v1/projects/{WRITABLE}/documents",
            files=[(wrong, ("trap-wrong.md", b"# Wrong field\n", "text/markdown"))],
        )
    problem = problem_of(response)
    assert (response.status_code, problem.code, problem.field) == (422, "invalid_request", wrong)
    assert "'files'" in problem.detail


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [value for name, value in attrs if name in ("src", "href") and value]


def test_the_api_docs_page_and_its_assets_come_from_the_service_alone(
    harness: Harness,
) -> None:
    with harness.client() as http:  # no key: the docs are public, like /openapi.json
        page = http.get("/docs")
        parser = _Links()
        parser.feed(page.text)
        assets = {link: http.get(link) for link in parser.links}
        spec = http.get("/openapi.json")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert re.findall(r"(?:https?:)?//[^\s'\"<>]+", page.text) == []  # no other host at all
    assert "'/openapi.json'" in page.text
    assert '"validatorUrl": null' in page.text  # the badge would call an online validator
    assert {link.rsplit(".", 1)[-1] for link in assets} == {"js", "css", "png"}
    for link, asset in assets.items():
        assert link.startswith("/docs/assets/")
        assert asset.status_code == 200, link
        assert len(asset.content) > 1_000, link
    script = next(a for link, a in assets.items() if link.endswith(".js"))
    assert "SwaggerUIBundle" in script.text
    assert "oas/3.1" in script.text  # a Swagger UI that reads the OpenAPI 3.1 document
    assert spec.json()["openapi"].startswith("3.1")


def test_the_docs_assets_serve_nothing_outside_their_folder(harness: Harness) -> None:
    with harness.client() as http:
        traversal = http.get("/docs/assets/%2e%2e/%2e%2e/etc/passwd")
        secured = http.get("/docs/assetsx")
    assert traversal.status_code == 404
    assert secured.status_code == 401  # only the assets folder is public


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"max_tokens": 600.0}, "max_tokens"),
        ({"retrieval_mode": "HYBRID"}, "retrieval_mode"),
        ({"allowed_scopes": "public"}, "allowed_scopes"),
    ],
)
def test_json_over_http_stays_strict(
    harness: Harness, changes: dict[str, object], field: str
) -> None:
    with harness.client("rita") as http:
        response = http.post("/v1/context", json=context_body("roll back a deploy", **changes))
    problem = problem_of(response)
    assert (response.status_code, problem.code, problem.field) == (422, "invalid_request", field)
