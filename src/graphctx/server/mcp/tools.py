"""MCP tools over the service: ``retrieve_context`` (the full contract), ``render_context``
(the same, plus the chat messages rendered from the bundle) and ``list_sources``.

Built on the SDK's low-level ``Server`` so the tool's input schema is exactly the
ContextRequest JSON Schema and its output schema exactly the ContextResponse one; results
carry the bundle as ``structuredContent`` (and the same JSON as text for older clients).
Who is calling is decided by the transport (``identify``): the authenticated HTTP request, or
the configured key for stdio. Without an identity every call fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphctx.contract import ContextRequest, ContextResponse
from graphctx.contract.parsing import invalid_request_from, parse_request
from graphctx.errors import GraphctxError, InvalidRequestError
from graphctx.server.auth import Identity
from graphctx.server.errors import AuthenticationError
from graphctx.server.mcp.errors import tool_error
from graphctx.server.models import RenderedContext, SourceList
from graphctx.server.service import GraphctxService

__all__ = ["Identify", "build_mcp_server"]

Identify = Callable[[ServerRequestContext[Any, Any]], Identity | None]
SERVER_NAME = "graphctx"


class ListSourcesInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project_id: str = Field(description="The project (namespace) whose sources to list.")


def _tools() -> list[Tool]:
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    return [
        Tool(
            name="retrieve_context",
            title="Retrieve context",
            description=(
                "Return a permission-checked evidence bundle for a question: items with "
                "content, source, version, freshness, provenance and citation ids S1..Sn, "
                "within max_tokens and timeout_ms. The project is `namespace`."
            ),
            input_schema=ContextRequest.model_json_schema(),
            output_schema=ContextResponse.model_json_schema(mode="serialization"),
            annotations=read_only,
        ),
        Tool(
            name="render_context",
            title="Render context",
            description=(
                "Like retrieve_context, and also return chat messages ready for a model: the "
                "fixed system instruction, then a user message with the question and one "
                '<source id="Sn"> block per bundle item. Returns {bundle, messages}.'
            ),
            input_schema=ContextRequest.model_json_schema(),
            output_schema=RenderedContext.model_json_schema(mode="serialization"),
            annotations=read_only,
        ),
        Tool(
            name="list_sources",
            title="List sources",
            description="List the documents of a project that the caller may see.",
            input_schema=ListSourcesInput.model_json_schema(),
            output_schema=SourceList.model_json_schema(mode="serialization"),
            annotations=read_only,
        ),
    ]


def build_mcp_server(service: GraphctxService, identify: Identify) -> Server[Any]:
    tools = _tools()
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        try:
            identity = identify(ctx)
            if identity is None:
                raise AuthenticationError("an API key is required")
            result = await _call(service, identity, params.name, params.arguments or {})
        except Exception as exc:
            return tool_error(exc)
        text = result.model_dump_json()
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=json.loads(text),
        )

    return Server(
        SERVER_NAME,
        instructions="Permission-aware GraphRAG context. Read-only.",
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _call(
    service: GraphctxService, identity: Identity, name: str, arguments: dict[str, Any]
) -> ContextResponse | RenderedContext | SourceList:
    if name == "retrieve_context":
        request = parse_request(json.dumps(arguments))
        return await service.retrieve(identity, request, face="mcp")
    if name == "render_context":
        request = parse_request(json.dumps(arguments))
        return await service.render(identity, request, face="mcp")
    if name == "list_sources":
        try:
            listing = ListSourcesInput.model_validate(arguments)
        except ValidationError as exc:
            error: GraphctxError = invalid_request_from(exc)
            raise error from exc
        return await service.list_sources(identity, listing.project_id)
    raise InvalidRequestError(f"unknown tool {name!r}", field="name", code="unknown_tool")
