"""The LangChain retriever and tool, run by LangChain itself (a runnable chain, a tool call),
against a real ``graphctx serve`` and in-process."""

from __future__ import annotations

import asyncio

import pytest
from adapter_world import QUESTION, Sources
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from graphctx.client import GraphctxClient
from graphctx.context.compact import compact_bundle_text
from graphctx.contract import ContextResponse
from graphctx.errors import AccessDeniedError, InvalidRequestError
from graphctx.integrations.langchain import GraphctxRetriever
from graphctx.provider import ContextProvider
from graphctx.testing.service import ALPHA_SECRET_MARKER, Harness


def retriever_for(sources: Sources, principal: str, scopes: list[str]) -> GraphctxRetriever:
    return GraphctxRetriever(
        source=sources.source(principal),
        principal_id=principal,
        scopes=scopes,
        namespace="alpha",
        retrieval_mode="hybrid",
        max_tokens=800,
    )


def cited(docs: list[Document]) -> list[tuple[str, str]]:
    return [(str(d.metadata["citation_id"]), str(d.metadata["document_id"])) for d in docs]


def test_a_chain_runs_the_retriever_and_gets_the_bundle_in_order(sources: Sources) -> None:
    retriever = retriever_for(sources, "ada", ["public", "secret"])
    chain = RunnableLambda(lambda question: question.strip()) | retriever | RunnableLambda(cited)
    rows = chain.invoke(f"  {QUESTION}  ")
    bundle = retriever.bundle(QUESTION)
    assert rows == [(item.citation_id, item.document_id) for item in bundle.items]
    assert {document for _, document in rows} == {"alpha-runbook", "alpha-payroll"}


def test_a_document_carries_the_items_text_citation_span_freshness_and_scores(
    sources: Sources,
) -> None:
    retriever = retriever_for(sources, "rita", ["public"])
    docs = retriever.invoke(QUESTION)
    bundle = retriever.bundle(QUESTION)
    assert len(docs) == len(bundle.items) >= 1
    for rank, (doc, item) in enumerate(zip(docs, bundle.items, strict=True), start=1):
        assert doc.page_content == item.content
        assert doc.id == item.chunk_id
        assert doc.metadata["citation_id"] == item.citation_id == f"S{rank}"
        assert doc.metadata["rank"] == rank
        assert doc.metadata["source_uri"] == item.source_uri
        assert (doc.metadata["start_char"], doc.metadata["end_char"]) == (
            item.span.start_char,
            item.span.end_char,
        )
        assert doc.metadata["freshness"] == item.freshness.value
        assert doc.metadata["score_fused"] == item.retrieval_scores.fused


def test_the_async_path_answers_what_the_sync_path_does(sources: Sources) -> None:
    retriever = retriever_for(sources, "rita", ["public"])
    docs = asyncio.run(retriever.ainvoke(QUESTION))
    assert cited(docs) == cited(retriever.invoke(QUESTION))


def test_the_retriever_never_widens_the_principals_scopes(sources: Sources) -> None:
    """rita asks for ``secret`` too; her grant (the key's, or the provider's grants) holds
    only ``public``, so the payroll note never comes back. ada, granted both, gets it."""
    widened = retriever_for(sources, "rita", ["public", "secret"]).invoke(QUESTION)
    granted = retriever_for(sources, "ada", ["public", "secret"]).invoke(QUESTION)
    assert {d.metadata["document_id"] for d in widened} == {"alpha-runbook"}
    assert all(ALPHA_SECRET_MARKER not in d.page_content for d in widened)
    assert "alpha-payroll" in {d.metadata["document_id"] for d in granted}


def test_a_refused_request_raises_the_typed_error(sources: Sources) -> None:
    retriever = retriever_for(sources, "rita", ["secret"])
    with pytest.raises(AccessDeniedError) as raised:
        retriever.invoke(QUESTION)
    assert raised.value.code == "no_effective_scopes"


def test_a_wrong_setting_fails_when_the_retriever_is_built(sources: Sources) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        GraphctxRetriever(source=sources.source("rita"), principal_id="rita", scopes=[])
    assert raised.value.field == "allowed_scopes"


def call(tool: BaseTool, query: str) -> ToolMessage:
    message = tool.invoke(
        {"type": "tool_call", "id": "call-1", "name": tool.name, "args": {"query": query}}
    )
    assert isinstance(message, ToolMessage)
    return message


def test_the_tool_takes_only_a_query_and_answers_sources_with_the_bundle(
    sources: Sources,
) -> None:
    tool = retriever_for(sources, "rita", ["public"]).as_tool()
    schema = tool.tool_call_schema
    assert isinstance(schema, type)
    assert issubclass(schema, BaseModel)
    assert schema.model_json_schema()["required"] == ["query"]
    assert set(schema.model_json_schema()["properties"]) == {"query"}
    message = call(tool, QUESTION)
    assert isinstance(message.artifact, ContextResponse)
    assert message.status == "success"
    assert isinstance(message.content, str)
    assert message.content == compact_bundle_text(message.artifact)
    assert '<source id="S1"' in message.content
    assert ALPHA_SECRET_MARKER not in message.content


def test_a_model_cannot_pass_scopes_to_the_tool(sources: Sources) -> None:
    tool = retriever_for(sources, "rita", ["public"]).as_tool()
    message = tool.invoke(
        {
            "type": "tool_call",
            "id": "call-2",
            "name": tool.name,
            "args": {"query": QUESTION, "scopes": ["secret"], "principal_id": "ada"},
        }
    )
    assert isinstance(message, ToolMessage)
    assert ALPHA_SECRET_MARKER not in str(message.content)
    assert isinstance(message.artifact, ContextResponse)
    assert {i.document_id for i in message.artifact.items} == {"alpha-runbook"}


def test_a_refused_tool_call_answers_the_agent_with_the_errors_line(sources: Sources) -> None:
    tool = retriever_for(sources, "rita", ["secret"]).as_tool()
    message = call(tool, QUESTION)
    expected = {
        "served": "none of the requested scopes is granted in this project",
        "in_process": "principal 'rita' holds none of the requested scopes in 'alpha'",
    }
    assert (message.status, message.content) == (
        "error",
        f"[no_effective_scopes] {expected[sources.kind]}",
    )


def test_over_a_client_the_key_decides_principal_and_scopes(harness: Harness) -> None:
    seen = {}
    for key in ("ada", "rita"):
        with GraphctxClient(harness.url, api_key=harness.keys[key], namespace="alpha") as client:
            retriever = GraphctxRetriever(source=client)
            docs = retriever.invoke(QUESTION)
            tool_text = retriever.as_tool().invoke({"query": QUESTION})
        seen[key] = {str(d.metadata["document_id"]) for d in docs}
        assert (ALPHA_SECRET_MARKER in tool_text) is (key == "ada")
    assert seen == {"ada": {"alpha-runbook", "alpha-payroll"}, "rita": {"alpha-runbook"}}


def test_in_process_the_principal_and_scopes_are_needed(in_process: ContextProvider) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        GraphctxRetriever(source=in_process, principal_id="rita", namespace="alpha")
    assert refused.value.field == "scopes"
