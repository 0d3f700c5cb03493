"""MCP over streamable HTTP, mounted in the service app, driven by the SDK's own client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from graphctx.context.compact import compact_bundle_text
from graphctx.contract import ContextRequest, ContextResponse
from graphctx.server.mcp.inputs import ContextArguments
from graphctx.server.models import SourceList
from graphctx.testing.service import Harness

T = TypeVar("T")


@asynccontextmanager
async def mcp_client(harness: Harness, key: str | None) -> AsyncIterator[Client]:
    headers = {} if key is None else {"Authorization": f"Bearer {harness.keys[key]}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{harness.url}/mcp", http_client=http)) as client,
    ):
        yield client


def run(harness: Harness, key: str | None, work: Callable[[Client], Awaitable[T]]) -> T:
    async def main() -> T:
        async with mcp_client(harness, key) as client:
            return await work(client)

    return anyio.run(main)


def text_of(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def ask(**overrides: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "query": "how do I roll back a deploy",
        "principal_id": "rita",
        "allowed_scopes": ["public"],
        "namespace": "alpha",
        "max_tokens": 400,
    }
    arguments.update(overrides)
    return arguments


def test_tool_schemas_are_the_contract(harness: Harness) -> None:
    tools = run(harness, "rita", lambda c: c.list_tools()).tools
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == {
        "retrieve_context",
        "render_context",
        "read_source",
        "list_sources",
        "whoami",
    }
    # issue 15: the input is the contract's request with the key's defaults (only the query
    # is required); the output is still exactly the contract's response
    assert by_name["retrieve_context"].input_schema == ContextArguments.model_json_schema()
    assert set(by_name["retrieve_context"].input_schema["properties"]) == set(
        ContextRequest.model_fields
    )
    assert by_name["retrieve_context"].output_schema == ContextResponse.model_json_schema(
        mode="serialization"
    )


def test_retrieve_context_returns_the_bundle_as_structured_content(harness: Harness) -> None:
    result = run(harness, "rita", lambda c: c.call_tool("retrieve_context", ask()))
    assert not result.is_error, text_of(result)
    bundle = ContextResponse.model_validate_json(json.dumps(result.structured_content))
    assert bundle.answerable
    assert {item.document_id for item in bundle.items} == {"alpha-runbook"}
    # issue 15: the text channel is the compact rendering of exactly this bundle
    assert text_of(result) == compact_bundle_text(bundle)


def test_list_sources_shows_only_visible_documents(harness: Harness) -> None:
    result = run(harness, "rita", lambda c: c.call_tool("list_sources", {"project_id": "alpha"}))
    listing = SourceList.model_validate_json(json.dumps(result.structured_content))
    assert [d.document_id for d in listing.documents] == ["alpha-runbook"]


ATTEMPTS: list[tuple[str, dict[str, Any], str]] = [
    *[("retrieve_context", ask(namespace=p), "not_found") for p in ("beta", "gamma", "zeta")],
    *[
        ("list_sources", {"project_id": p}, "not_found")
        for p in ("beta", "gamma", "Alpha", "alpha ", "\u0430lpha", "../beta", "")
    ],
    ("retrieve_context", ask(principal_id="ada", allowed_scopes=["secret"]), "principal_mismatch"),
    ("retrieve_context", ask(allowed_scopes=["secret"]), "no_effective_scopes"),
    ("retrieve_context", ask(allowed_scopes=["*"]), "invalid_request"),
    ("retrieve_context", ask(namespace="../beta"), "invalid_request"),
    ("retrieve_context", ask(max_tokens=10**9), "invalid_request"),
    ("retrieve_context", {**ask(), "grants": {"alpha": ["secret"]}}, "invalid_request"),
    ("list_sources", {"project_id": "alpha", "scopes": ["secret"]}, "invalid_request"),
    ("drop_everything", {}, "unknown_tool"),
]


def test_mcp_denials_fail_closed_without_data(harness: Harness) -> None:
    async def work(client: Client) -> list[tuple[str, str]]:
        seen = []
        for name, arguments, _ in ATTEMPTS:
            result = await client.call_tool(name, arguments)
            body = text_of(result)
            assert result.is_error, (name, arguments, body)
            assert not [s for s in harness.forbidden if s in body]
            seen.append((name, json.loads(body)["code"]))
        return seen

    codes = run(harness, "rita", work)
    assert codes == [(name, code) for name, _, code in ATTEMPTS]


def test_mcp_without_a_key_is_refused(harness: Harness) -> None:
    with pytest.raises(BaseExceptionGroup) as caught:
        run(harness, None, lambda c: c.list_tools())
    assert caught.group_contains(MCPError)


def test_mcp_http_requests_are_authenticated_like_rest(harness: Harness) -> None:
    with harness.client() as anonymous:
        response = anonymous.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
