"""The Agent Framework context provider inside a real agent run: an ``Agent`` with
Agent Framework's OpenAI chat client, whose only stand-in is the hosted model (a local
OpenAI-compatible server), against a real ``graphctx serve`` and in-process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from adapter_world import QUESTION, Sources
from agent_framework import Agent, AgentResponse, AgentSession
from agent_framework.exceptions import (
    IntegrationException,
    IntegrationInvalidAuthException,
    IntegrationInvalidRequestException,
)
from agent_framework.openai import OpenAIChatCompletionClient

from graphctx.client import GraphctxClient
from graphctx.context.compact import compact_bundle_text
from graphctx.errors import InvalidRequestError
from graphctx.integrations.agent_framework import DEFAULT_INSTRUCTIONS, GraphctxContextProvider
from graphctx.integrations.evidence import request_for
from graphctx.provider import ContextProvider
from graphctx.testing.fake_chat import ChatBody, FakeChatServer
from graphctx.testing.service import ALPHA_SECRET_MARKER, Harness

REPLY = "Pause the pipeline and run the rollback job [S1]."


@pytest.fixture(scope="module")
def model() -> Iterator[FakeChatServer]:
    with FakeChatServer(lambda body: REPLY) as server:
        yield server


def agent_with(model: FakeChatServer, provider: GraphctxContextProvider) -> Agent:
    client = OpenAIChatCompletionClient(
        model="fake-model", api_key="not-a-real-key", base_url=f"{model.base_url}/v1"
    )
    return Agent(client, "You are the on-call assistant.", context_providers=[provider])


def provider_for(sources: Sources, principal: str, scopes: list[str]) -> GraphctxContextProvider:
    return GraphctxContextProvider(
        sources.source(principal), principal_id=principal, scopes=scopes, namespace="alpha"
    )


def run(agent: Agent, question: str, session: AgentSession | None = None) -> AgentResponse:
    async def go() -> AgentResponse:
        return await agent.run(question, session=session)

    return asyncio.run(go())


def sent_text(body: ChatBody) -> str:
    return "\n".join(str(message.get("content")) for message in body["messages"])


def test_an_agent_run_sends_the_model_the_bundle_and_keeps_its_citations(
    sources: Sources, model: FakeChatServer
) -> None:
    provider = provider_for(sources, "ada", ["public", "secret"])
    agent = agent_with(model, provider)
    session = agent.create_session()
    before = len(model.requests)
    response = run(agent, QUESTION, session)
    assert response.text == REPLY
    assert len(model.requests) == before + 1
    body = model.requests[-1]
    roles = [message["role"] for message in body["messages"]]
    assert roles == ["system", "user", "user"]
    assert DEFAULT_INSTRUCTIONS in body["messages"][0]["content"]
    context, question = body["messages"][1]["content"], body["messages"][2]["content"]
    assert question == QUESTION
    bundle = provider.source.retrieve(request_for(provider.asking, QUESTION))
    head, blocks = context.split("\n", 1)
    assert blocks == compact_bundle_text(bundle).split("\n", 1)[1]  # the same items, same text
    assert head.startswith(f"{len(bundle.items)} source(s), ")
    assert ALPHA_SECRET_MARKER in context  # ada may read the payroll note
    citations = session.state[provider.source_id]["citations"]
    assert {c["document_id"] for c in citations.values()} == {"alpha-runbook", "alpha-payroll"}
    assert sorted(citations) == [item.citation_id for item in bundle.items]
    restored = AgentSession.from_dict(json.loads(json.dumps(session.to_dict())))
    assert restored.state[provider.source_id]["citations"] == citations  # persistable as JSON


def test_the_model_never_sees_what_the_principal_may_not(
    sources: Sources, model: FakeChatServer
) -> None:
    """rita's provider asks for ``secret`` too; the key's grant (or the in-process grants)
    holds only ``public``: the payroll note is not in what the model is sent."""
    agent = agent_with(model, provider_for(sources, "rita", ["public", "secret"]))
    run(agent, QUESTION)
    sent = sent_text(model.requests[-1])
    assert '<source id="S1"' in sent
    assert ALPHA_SECRET_MARKER not in sent
    assert "Payroll escalation" not in sent


def test_a_refused_request_fails_the_run_with_the_frameworks_exception(
    sources: Sources, model: FakeChatServer
) -> None:
    before = len(model.requests)
    agent = agent_with(model, provider_for(sources, "rita", ["secret"]))
    with pytest.raises(IntegrationInvalidRequestException) as raised:
        run(agent, QUESTION)
    assert str(raised.value).startswith("[no_effective_scopes] ")
    assert raised.value.__cause__ is None
    assert len(model.requests) == before  # the model was never called


def test_a_bad_key_fails_the_run_as_an_auth_error(harness: Harness, model: FakeChatServer) -> None:
    client = GraphctxClient(harness.url, api_key="gck_nope_x", namespace="alpha")
    provider = GraphctxContextProvider(client, principal_id="rita", scopes=["public"])
    with client, pytest.raises(IntegrationInvalidAuthException) as raised:
        run(agent_with(model, provider), QUESTION)
    assert str(raised.value) == "[unauthenticated] the API key is not valid"


def test_an_unreachable_service_fails_the_run_as_an_integration_error(
    model: FakeChatServer,
) -> None:
    client = GraphctxClient("http://127.0.0.1:9", namespace="alpha", timeout_s=5)
    provider = GraphctxContextProvider(client, principal_id="rita", scopes=["public"])
    with client, pytest.raises(IntegrationException) as raised:
        run(agent_with(model, provider), QUESTION)
    assert not isinstance(raised.value, IntegrationInvalidRequestException)
    assert str(raised.value).startswith("[service_unreachable] POST /v1/context failed: ")


def test_over_a_client_the_key_decides_principal_and_scopes(
    harness: Harness, model: FakeChatServer
) -> None:
    """No principal, no scopes: the service answers with the key's view (ada reads the
    payroll note, rita does not)."""
    for key, sees_secret in (("ada", True), ("rita", False)):
        with GraphctxClient(harness.url, api_key=harness.keys[key], namespace="alpha") as client:
            run(agent_with(model, GraphctxContextProvider(client)), QUESTION)
        sent = sent_text(model.requests[-1])
        assert '<source id="S1"' in sent
        assert (ALPHA_SECRET_MARKER in sent) is sees_secret


def test_in_process_the_principal_and_scopes_are_needed(in_process: ContextProvider) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        GraphctxContextProvider(in_process, namespace="alpha")
    assert refused.value.field == "principal_id"
