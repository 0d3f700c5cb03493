"""graphctx.client against a real ``graphctx serve``: every operation answers the service's
models, and every failure is the typed error the service raised, never an httpx exception."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from adapter_world import QUESTION

from graphctx.client import GraphctxClient, ServiceUnreachableError, UnexpectedResponseError
from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode
from graphctx.errors import (
    AccessDeniedError,
    GraphctxError,
    InvalidRequestError,
    NotFoundError,
    StoreUnavailableError,
)
from graphctx.server.errors import AuthenticationError, LimitExceededError
from graphctx.server.models import DocumentIn, RenderedContext, SearchResponse, WhoAmI
from graphctx.testing.service import ALPHA_SECRET_MARKER, Harness


def client_for(harness: Harness, key: str, namespace: str | None = "alpha") -> GraphctxClient:
    return GraphctxClient(harness.url, api_key=harness.keys[key], namespace=namespace)


def ask(principal: str, scopes: list[str], **fields: object) -> ContextRequest:
    return ContextRequest.model_validate(
        {"query": QUESTION, "principal_id": principal, "allowed_scopes": scopes, **fields}
    )


def refusal(call: Callable[[], object]) -> GraphctxError:
    """The typed error ``call`` raised (it must raise one)."""
    try:
        call()
    except GraphctxError as exc:
        return exc
    raise AssertionError("the call was not refused")


def test_retrieve_answers_the_bundle_the_service_sent(harness: Harness) -> None:
    with client_for(harness, "ada") as client:
        bundle = client.retrieve(ask("ada", ["public", "secret"], trace_id="client-1"))
        raw = client._http.post(
            "/v1/context",
            json=ask("ada", ["public", "secret"], namespace="alpha").model_dump(mode="json"),
        )
    assert isinstance(bundle, ContextResponse)
    assert bundle.trace_id == "client-1"
    assert bundle.manifest.namespace == "alpha"  # the client's project, as the request named none
    expected = ContextResponse.model_validate_json(raw.content)
    assert [i.chunk_id for i in bundle.items] == [i.chunk_id for i in expected.items]
    assert {i.document_id for i in bundle.items} == {"alpha-runbook", "alpha-payroll"}


def test_render_answers_the_bundle_and_its_messages(harness: Harness) -> None:
    with client_for(harness, "rita") as client:
        rendered = client.render(ask("rita", ["public"], retrieval_mode=RetrievalMode.HYBRID))
    assert isinstance(rendered, RenderedContext)
    assert [m.role for m in rendered.messages] == ["system", "user"]
    assert '<source id="S1"' in rendered.messages[1].content
    assert ALPHA_SECRET_MARKER not in rendered.model_dump_json()


def test_search_and_documents_default_to_the_keys_view(harness: Harness) -> None:
    with client_for(harness, "rita") as client:
        found = client.search(QUESTION, limit=3)
        listing = client.list_documents()
    assert isinstance(found, SearchResponse)
    assert [r.document_id for r in found.results] == ["alpha-runbook"]
    assert [d.document_id for d in listing.documents] == ["alpha-runbook"]


def test_ingest_upload_and_delete_round_trip(harness: Harness, tmp_path: Path) -> None:
    note = tmp_path / "client-note.md"
    note.write_text("# Client note\n\nThe client uploads this note.\n", encoding="utf-8")
    with client_for(harness, "wes", namespace="gamma") as client:
        sent = client.ingest(
            [DocumentIn(document_id="client-json", text="Sent as JSON by the client.")],
            scopes=["drafts"],
        )
        uploaded = client.upload([note], scopes=["drafts"], source_version="7")
        listed = {d.document_id: d for d in client.list_documents().documents}
        deleted = client.delete_document("client-json")
        after = {d.document_id for d in client.list_documents().documents}
    assert (sent.errors, [d.document_id for d in sent.documents]) == ([], ["client-json"])
    assert [(d.origin, d.version) for d in uploaded.documents] == [("client-note.md", "7")]
    assert {"client-json", "client-note.md"} <= set(listed)
    assert deleted.deleted_versions == 1
    assert "client-json" not in after


def test_probes(harness: Harness) -> None:
    with client_for(harness, "rita") as client:
        assert client.healthy()
        client.check_ready()


@pytest.mark.parametrize(
    ("key", "call", "error", "code"),
    [
        (
            "rita",
            lambda c: c.retrieve(ask("ada", ["public"])),
            AccessDeniedError,
            "principal_mismatch",
        ),
        (
            "rita",
            lambda c: c.retrieve(ask("rita", ["secret"])),
            AccessDeniedError,
            "no_effective_scopes",
        ),
        ("rita", lambda c: c.list_documents(namespace="beta"), NotFoundError, "not_found"),
        ("rita", lambda c: c.search(QUESTION, limit=0), InvalidRequestError, "invalid_request"),
        ("rita", lambda c: c.delete_document("alpha-runbook"), AccessDeniedError, "write_denied"),
        ("rita", lambda c: c.search("x" * 4001), InvalidRequestError, "invalid_request"),
        ("rita", lambda c: c.search(QUESTION, limit=500), LimitExceededError, "limit_exceeded"),
    ],
)
def test_a_refusal_is_the_typed_error_the_service_raised(
    harness: Harness,
    key: str,
    call: object,
    error: type[GraphctxError],
    code: str,
) -> None:
    assert callable(call)
    with client_for(harness, key) as client, pytest.raises(error) as raised:
        call(client)
    assert raised.value.code == code
    assert raised.value.__cause__ is None  # nothing of httpx's chained to it


def test_a_bad_key_is_an_authentication_error(harness: Harness) -> None:
    with (
        GraphctxClient(harness.url, api_key="gck_nope_x", namespace="alpha") as client,
        pytest.raises(AuthenticationError) as raised,
    ):
        client.list_documents()
    assert raised.value.code == "unauthenticated"


def test_a_project_must_be_named_somewhere(harness: Harness) -> None:
    with (
        client_for(harness, "rita", namespace=None) as client,
        pytest.raises(InvalidRequestError) as raised,
    ):
        client.list_documents()
    assert raised.value.field == "namespace"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_service_that_does_not_answer_is_unreachable_not_an_httpx_error() -> None:
    with GraphctxClient(f"http://127.0.0.1:{free_port()}", namespace="alpha") as client:
        with pytest.raises(ServiceUnreachableError) as raised:
            client.list_documents()
        healthy = client.healthy()
    assert not healthy
    assert raised.value.retryable
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


def answering(status: int, content_type: str, body: bytes) -> httpx.MockTransport:
    return httpx.MockTransport(
        lambda request: httpx.Response(status, headers={"content-type": content_type}, content=body)
    )


def test_a_proxy_page_is_an_unexpected_response() -> None:
    transport = answering(502, "text/html", b"<html>Bad gateway</html>")
    with (
        GraphctxClient("http://proxy", namespace="alpha", transport=transport) as client,
        pytest.raises(UnexpectedResponseError, match="HTTP 502"),
    ):
        client.list_documents()


def test_a_2xx_body_that_is_not_the_model_is_an_unexpected_response() -> None:
    transport = answering(200, "application/json", b'{"project_id": 3}')
    with (
        GraphctxClient("http://proxy", namespace="alpha", transport=transport) as client,
        pytest.raises(UnexpectedResponseError, match="not a SourceList"),
    ):
        client.list_documents()


def test_a_503_problem_keeps_its_code_and_retryable_flag() -> None:
    body = (
        b'{"type": "urn:graphctx:problem:overloaded", "title": "Service Unavailable",'
        b' "status": 503, "detail": "busy", "code": "overloaded", "retryable": true}'
    )
    transport = answering(503, "application/problem+json", body)
    with (
        GraphctxClient("http://svc", namespace="alpha", transport=transport) as client,
        pytest.raises(StoreUnavailableError) as raised,
    ):
        client.list_documents()
    assert (raised.value.code, raised.value.retryable, raised.value.message) == (
        "overloaded",
        True,
        "busy",
    )


def test_a_long_retrieval_is_never_cut_short_by_the_clients_timeout() -> None:
    waits: dict[str, float] = {}

    def record(request: httpx.Request) -> httpx.Response:
        waits[request.url.path] = request.extensions["timeout"]["read"]
        return httpx.Response(503, headers={"content-type": "text/plain"}, content=b"down")

    transport = httpx.MockTransport(record)
    with GraphctxClient("http://svc", namespace="alpha", timeout_s=1, transport=transport) as c:
        for call in (
            lambda: c.retrieve(ask("rita", ["public"], timeout_ms=60_000)),
            lambda: c.render(ask("rita", ["public"], timeout_ms=500)),
            c.list_documents,
        ):
            with pytest.raises(UnexpectedResponseError):
                call()
    assert waits == {
        "/v1/context": 70.0,
        "/v1/context/messages": 10.5,
        "/v1/projects/alpha/documents": 1,
    }


def test_whoami_answers_the_keys_principal_projects_and_scopes(harness: Harness) -> None:
    with client_for(harness, "ada", namespace=None) as client:
        whoami = client.whoami()
    assert isinstance(whoami, WhoAmI)
    assert whoami.principal_id == "ada"
    assert [(p.project_id, p.scopes) for p in whoami.projects] == [
        ("alpha", ["public", "secret"]),
        ("beta", ["public"]),
    ]


def test_retrieve_and_render_take_a_question_alone(harness: Harness) -> None:
    with client_for(harness, "ada") as client:
        alone = client.retrieve(QUESTION)
        explicit = client.retrieve(ask("ada", ["public", "secret"]))
        rendered = client.render(QUESTION, max_tokens=400)
    assert [i.chunk_id for i in alone.items] == [i.chunk_id for i in explicit.items]
    assert {i.document_id for i in alone.items} == {"alpha-runbook", "alpha-payroll"}
    assert alone.manifest.namespace == "alpha"
    assert rendered.bundle.limits.max_tokens == 400
    assert ALPHA_SECRET_MARKER in rendered.messages[1].content  # ada may read it


def test_a_question_with_options_only_narrows_and_is_checked(harness: Harness) -> None:
    with client_for(harness, "ada") as client:
        narrowed = client.retrieve(QUESTION, scopes=("public",), retrieval_mode="hybrid")
    with client_for(harness, "rita") as client:
        mismatch = refusal(lambda: client.retrieve(QUESTION, principal_id="ada"))
        widening = refusal(lambda: client.retrieve(QUESTION, scopes=["secret"]))
        bad_budget = refusal(lambda: client.retrieve(QUESTION, max_tokens=0))
        both = refusal(lambda: client.retrieve(ask("rita", ["public"]), scopes=["public"]))
        bad_mode = refusal(lambda: client.render(QUESTION, retrieval_mode="fastest"))
    assert {i.document_id for i in narrowed.items} == {"alpha-runbook"}
    assert (type(mismatch), mismatch.code) == (AccessDeniedError, "principal_mismatch")
    assert (type(widening), widening.code) == (AccessDeniedError, "no_effective_scopes")
    assert isinstance(bad_budget, InvalidRequestError)
    assert bad_budget.field == "max_tokens"
    assert isinstance(both, InvalidRequestError)
    assert both.field == "allowed_scopes"
    assert isinstance(bad_mode, InvalidRequestError)
    assert bad_mode.field == "retrieval_mode"
