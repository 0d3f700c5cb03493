"""HTTP identity from the key (issue 15): ``GET /v1/whoami``, and context bodies that leave
``principal_id`` and ``allowed_scopes`` to the key while given ones are checked as before."""

from __future__ import annotations

from typing import Any

import pytest

from graphctx.contract import ContextResponse
from graphctx.server.models import RenderedContext, WhoAmI
from graphctx.testing.service import Harness

QUESTION = "how do I roll back a deploy"


def post(harness: Harness, key: str, path: str, body: dict[str, Any]) -> Any:
    with harness.client(key) as http:
        return http.post(path, json=body)


def test_whoami_answers_the_keys_principal_projects_and_scopes_and_nothing_else(
    harness: Harness,
) -> None:
    with harness.client("ada") as http:
        ada = http.get("/v1/whoami")
    with harness.client("rita") as http:
        rita = http.get("/v1/whoami")
    assert ada.status_code == 200
    assert ada.json() == {
        "principal_id": "ada",
        "projects": [
            {"project_id": "alpha", "scopes": ["public", "secret"]},
            {"project_id": "beta", "scopes": ["public"]},
        ],
    }
    assert WhoAmI.model_validate_json(rita.content) == WhoAmI.model_validate(
        {"principal_id": "rita", "projects": [{"project_id": "alpha", "scopes": ["public"]}]}
    )


def test_whoami_needs_a_key(harness: Harness) -> None:
    with harness.client() as http:
        anonymous = http.get("/v1/whoami")
    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "unauthenticated")


@pytest.mark.parametrize("path", ["/v1/context", "/v1/context/messages"])
def test_a_body_with_only_the_question_gets_the_keys_principal_and_every_granted_scope(
    harness: Harness, path: str
) -> None:
    defaulted = post(harness, "ada", path, {"query": QUESTION, "namespace": "alpha"})
    explicit = post(
        harness,
        "ada",
        path,
        {
            "query": QUESTION,
            "namespace": "alpha",
            "principal_id": "ada",
            "allowed_scopes": ["public", "secret"],
        },
    )
    assert (defaulted.status_code, explicit.status_code) == (200, 200)
    if path == "/v1/context":
        got, want = (ContextResponse.model_validate_json(r.content) for r in (defaulted, explicit))
    else:
        got, want = (
            RenderedContext.model_validate_json(r.content).bundle for r in (defaulted, explicit)
        )
    assert got.answerable
    assert got.manifest.effective_scope_count == 2
    assert [i.chunk_id for i in got.items] == [i.chunk_id for i in want.items]


def test_given_identity_is_checked_exactly_as_before(harness: Harness) -> None:
    base = {"query": QUESTION, "namespace": "alpha"}
    mismatch = post(harness, "rita", "/v1/context", {**base, "principal_id": "ada"})
    widening = post(harness, "rita", "/v1/context", {**base, "allowed_scopes": ["secret"]})
    narrowed = post(harness, "ada", "/v1/context", {**base, "allowed_scopes": ["public"]})
    impersonation = post(harness, "ada", "/v1/context", {**base, "principal_id": "rita"})
    assert (mismatch.status_code, mismatch.json()["code"]) == (403, "principal_mismatch")
    assert (widening.status_code, widening.json()["code"]) == (403, "no_effective_scopes")
    assert narrowed.status_code == 200
    assert ContextResponse.model_validate_json(narrowed.content).manifest.effective_scope_count == 1
    assert impersonation.status_code == 200


def test_a_defaulted_body_for_a_project_the_key_lacks_is_not_found(harness: Harness) -> None:
    unknown = post(harness, "rita", "/v1/context", {"query": QUESTION, "namespace": "beta"})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "not_found")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"principal_id": 7}, "principal_id"),
        ({"allowed_scopes": []}, "allowed_scopes"),
        ({"allowed_scopes": "public"}, "allowed_scopes"),
        ({"max_tokens": 600.0}, "max_tokens"),
        ({"unknown": 1}, "unknown"),
        ({"query": "   "}, "query"),
    ],
)
def test_the_body_stays_strict(harness: Harness, extra: dict[str, object], field: str) -> None:
    body = {"query": QUESTION, "namespace": "alpha", **extra}
    refused = post(harness, "rita", "/v1/context", body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"].split(".")[0] == field
