"""Cross-project and cross-scope attempts over a real socket all fail closed, without data.

The attack list follows the failures of peer systems (research/anchors.md): namespace
partitions that leak across workspaces, caller-asserted scopes, identity headers trusted
without proof, and path tricks. Every attempt is made as ``rita`` (alpha: public) or with
forged credentials; no body may contain a marker, id or title of a document rita may not see.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.server.models import Problem
from graphctx.testing.service import GATEWAY_SECRET, Harness

OTHER_PROJECTS = (
    "beta",
    "gamma",
    "Beta",
    "BETA",
    "beta ",
    " beta",
    "alpha ",
    "Alpha",
    "ALPHA",
    "\uff41\uff4c\uff50\uff48\uff41",  # fullwidth "alpha"
    "\u0430lpha",  # Cyrillic a
    "alpha\u200b",
    "alph\u0430",
    "be\u0074a\u0301",
    "alpha%00",
    "alpha%0a",
    "..%2Fbeta",
    "alpha%2F..%2Fbeta",
    "%2e%2e",
    "%2e%2e%2fbeta",
    "..",
    "alpha;beta",
    "alpha,beta",
    "*",
    "default",
    "northwind",
    "alpha\\..\\beta",
    "beta%23",
    "beta?x=1",
)
FORGED_SCOPES = (
    ["secret"],
    ["SECRET"],
    ["Secret"],
    ["secret "],
    ["*"],
    ["public", "secret"],
    [""],
    ["public\nsecret"],
    ["drafts"],
    ["public", "drafts", "secret"],
    ["public%2Csecret"],
)
FORGED_PRINCIPALS = ("ada", "Ada", "ADA", "wes", "rita ", "rita\u200b", "ri ta", "root", "*")
ERROR_STATUSES = frozenset({400, 401, 403, 404, 405, 413, 415, 422, 429})


@dataclass(frozen=True)
class Attempt:
    name: str
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, object] | None = None
    must_fail: bool = True


def rita(harness: Harness) -> dict[str, str]:
    return {"Authorization": f"Bearer {harness.keys['rita']}"}


def project_attempts(harness: Harness) -> Iterator[Attempt]:
    for project in OTHER_PROJECTS:
        base = f"/v1/projects/{project}"
        yield Attempt(
            f"search {project!r}",
            "POST",
            f"{base}/search",
            rita(harness),
            {"query": "deploy rollback switch key"},
        )
        yield Attempt(f"list {project!r}", "GET", f"{base}/documents", rita(harness))
        yield Attempt(
            f"delete in {project!r}", "DELETE", f"{base}/documents/beta-runbook", rita(harness)
        )
        yield Attempt(
            f"ingest into {project!r}",
            "POST",
            f"{base}/documents",
            rita(harness),
            {"documents": [{"document_id": "x", "text": "x", "scopes": ["public"]}]},
        )
        yield Attempt(
            f"context in {project!r}",
            "POST",
            "/v1/context",
            rita(harness),
            {
                "query": "deploy rollback switch key",
                "principal_id": "rita",
                "allowed_scopes": ["public"],
                "namespace": project,
            },
        )


def scope_attempts(harness: Harness) -> Iterator[Attempt]:
    for scopes in FORGED_SCOPES:
        narrowing = set(scopes) & {"public"} == {"public"} and all(s for s in scopes)
        for mode in ("auto", "hybrid", "graph", "text2cypher"):
            yield Attempt(
                f"context scopes={scopes} mode={mode}",
                "POST",
                "/v1/context",
                rita(harness),
                {
                    "query": "payroll manual run code deploy rollback",
                    "principal_id": "rita",
                    "allowed_scopes": scopes,
                    "namespace": "alpha",
                    "retrieval_mode": mode,
                },
                must_fail=not narrowing,
            )
        yield Attempt(
            f"search scopes={scopes}",
            "POST",
            "/v1/projects/alpha/search",
            rita(harness),
            {"query": "payroll manual run code", "allowed_scopes": scopes},
            must_fail=not narrowing,
        )
    for principal in FORGED_PRINCIPALS:
        yield Attempt(
            f"context as {principal!r}",
            "POST",
            "/v1/context",
            rita(harness),
            {
                "query": "payroll manual run code",
                "principal_id": principal,
                "allowed_scopes": ["public", "secret"],
                "namespace": "alpha",
            },
        )
        yield Attempt(
            f"search as {principal!r}",
            "POST",
            "/v1/projects/alpha/search",
            rita(harness),
            {"query": "payroll", "principal_id": principal},
        )
    for path in (
        "/v1/projects/alpha/documents/alpha-payroll",
        "/v1/projects/alpha/documents/..%2F..%2Fbeta%2Fdocuments%2Fbeta-runbook",
        "/v1/projects/alpha/documents/../../beta/documents/beta-runbook",
        "/v1/projects/alpha/documents/alpha-payroll%00",
    ):
        yield Attempt(f"delete {path}", "DELETE", path, rita(harness))


def credential_attempts(harness: Harness) -> Iterator[Attempt]:
    key = harness.keys["rita"]
    secret = key.split("_", 2)[2]
    ada_secret = harness.keys["ada"].split("_", 2)[2]
    forged = {
        "none": {},
        "null bearer": {"Authorization": "Bearer null"},
        "bare scheme": {"Authorization": "Bearer"},
        "basic": {"Authorization": "Basic " + base64.b64encode(b"rita:" + key.encode()).decode()},
        "truncated": {"Authorization": f"Bearer {key[:-1]}"},
        "extended": {"Authorization": f"Bearer {key}x"},
        "id swap": {"Authorization": f"Bearer gck_ada_{secret}"},
        "id swap 2": {"Authorization": f"Bearer gck_rita_{ada_secret}"},
        "unknown id": {"Authorization": f"Bearer gck_mallory_{secret}"},
        "two keys": {"Authorization": f"Bearer {key}", "X-API-Key": harness.keys["ada"]},
        "key in query": {},
        "gateway no secret": {
            "X-Graphctx-Principal": "ada",
            "X-Graphctx-Grants": "alpha=public,secret;beta=public",
        },
        "gateway wrong secret": {
            "X-Graphctx-Gateway-Secret": GATEWAY_SECRET[:-1] + "x",
            "X-Graphctx-Principal": "ada",
            "X-Graphctx-Grants": "alpha=secret",
        },
        "gateway empty secret": {
            "X-Graphctx-Gateway-Secret": "",
            "X-Graphctx-Principal": "ada",
            "X-Graphctx-Grants": "alpha=secret",
        },
        "gateway plus key": {
            "Authorization": f"Bearer {key}",
            "X-Graphctx-Principal": "ada",
            "X-Graphctx-Grants": "alpha=secret",
        },
        "gateway secret only": {"X-Graphctx-Gateway-Secret": GATEWAY_SECRET},
        "gateway bad grants": {
            "X-Graphctx-Gateway-Secret": GATEWAY_SECRET,
            "X-Graphctx-Principal": "ada",
            "X-Graphctx-Grants": "alpha=secret;;alpha=public",
        },
        "gateway injected grants": {
            "X-Graphctx-Gateway-Secret": GATEWAY_SECRET,
            "X-Graphctx-Principal": "ada",
            "X-Graphctx-Grants": "alpha=public%0D%0AX-Evil: 1",
        },
        "gateway other project": {
            "X-Graphctx-Gateway-Secret": GATEWAY_SECRET,
            "X-Graphctx-Principal": "ada",
            "X-Graphctx-Grants": "beta=public",
        },
    }
    for name, headers in forged.items():
        path = (
            "/v1/projects/beta/search"
            if name == "gateway other project"
            else ("/v1/projects/alpha/search")
        )
        if name == "key in query":
            path += f"?api_key={key}"
        yield Attempt(
            f"credentials: {name}",
            "POST",
            path,
            headers,
            {"query": "payroll manual run code switch key"},
        )
        # A valid gateway identity may list tools; the grant is what stops it, not the door.
        yield Attempt(
            f"credentials: {name} (mcp)",
            "POST",
            "/mcp",
            headers,
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            must_fail=name != "gateway other project",
        )


def check(harness: Harness, http: httpx.Client, attempt: Attempt) -> str | None:
    """Return a failure description, or None when the attempt failed closed."""
    try:
        response = http.request(
            attempt.method, attempt.path, headers=attempt.headers, json=attempt.body
        )
    except (httpx.InvalidURL, httpx.LocalProtocolError):
        return None  # the client refuses to send it at all
    body = response.text
    leaked = [s for s in harness.forbidden if s in body]
    if leaked:
        return f"{attempt.name}: leaked {leaked} with {response.status_code}"
    if "Traceback" in body or response.status_code >= 500:
        return f"{attempt.name}: {response.status_code} {body[:200]}"
    if response.status_code in ERROR_STATUSES:
        if response.headers.get("content-type") != "application/problem+json":
            return f"{attempt.name}: error without problem+json"
        Problem.model_validate_json(body)
        return None
    if attempt.must_fail:
        return f"{attempt.name}: expected a refusal, got {response.status_code}"
    return None


@pytest.fixture(scope="module")
def shared_http(harness: Harness) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=harness.url, timeout=60) as http:
        yield http


def all_attempts(harness: Harness) -> list[Attempt]:
    return [*project_attempts(harness), *scope_attempts(harness), *credential_attempts(harness)]


def test_hundreds_of_cross_boundary_attempts_fail_closed(
    harness: Harness, shared_http: httpx.Client
) -> None:
    attempts = all_attempts(harness)
    assert len(attempts) >= 250  # plus 300 generated below
    failures = [f for a in attempts if (f := check(harness, shared_http, a)) is not None]
    assert failures == []


def test_a_denied_project_reads_exactly_like_a_missing_one(harness: Harness) -> None:
    with harness.client("rita") as http:
        denied = [
            http.post("/v1/projects/beta/search", json={"query": "x"}),
            http.get("/v1/projects/beta/documents"),
            http.post(
                "/v1/context",
                json={
                    "query": "x",
                    "principal_id": "rita",
                    "allowed_scopes": ["public"],
                    "namespace": "beta",
                },
            ),
        ]
        missing = [
            http.post("/v1/projects/no-such-project/search", json={"query": "x"}),
            http.get("/v1/projects/no-such-project/documents"),
            http.post(
                "/v1/context",
                json={
                    "query": "x",
                    "principal_id": "rita",
                    "allowed_scopes": ["public"],
                    "namespace": "no-such-project",
                },
            ),
        ]
    for d, m in zip(denied, missing, strict=True):
        assert (d.status_code, d.headers["content-type"]) == (
            m.status_code,
            m.headers["content-type"],
        )
        assert d.json() | {"trace_id": None} == m.json() | {"trace_id": None}


def test_the_gateway_with_its_secret_gets_exactly_the_asserted_grant(harness: Harness) -> None:
    headers = {
        "X-Graphctx-Gateway-Secret": GATEWAY_SECRET,
        "X-Graphctx-Principal": "gina",
        "X-Graphctx-Grants": "alpha=public;beta=public",
    }
    with httpx.Client(base_url=harness.url, headers=headers, timeout=60) as http:
        alpha = http.post("/v1/projects/alpha/search", json={"query": "payroll manual run code"})
        beta = http.post("/v1/projects/beta/search", json={"query": "switch key"})
        write = http.post(
            "/v1/projects/alpha/documents", json={"documents": [{"document_id": "g", "text": "g"}]}
        )
    assert alpha.status_code == 200
    assert not [s for s in harness.forbidden if s in alpha.text]
    assert beta.status_code == 404  # beta is outside the gateway's allowed_projects
    assert write.status_code == 403


@settings(max_examples=150, deadline=None)
@given(
    project=st.text(min_size=1, max_size=40).filter(lambda p: p != "alpha"),
    scopes=st.lists(st.text(max_size=20), min_size=0, max_size=4),
    principal=st.text(max_size=30),
)
def test_generated_projects_scopes_and_principals_never_leak(
    harness: Harness, shared_http: httpx.Client, project: str, scopes: list[str], principal: str
) -> None:
    attempts = [
        Attempt(
            "generated context",
            "POST",
            "/v1/context",
            rita(harness),
            {
                "query": "payroll manual run code switch key",
                "principal_id": principal,
                "allowed_scopes": scopes,
                "namespace": project,
            },
        ),
        Attempt(
            "generated search",
            "POST",
            f"/v1/projects/{quote(project, safe='')}/search",
            rita(harness),
            {"query": "payroll manual run code switch key", "allowed_scopes": scopes or None},
        ),
    ]
    failures = [f for a in attempts if (f := check(harness, shared_http, a)) is not None]
    assert failures == []
