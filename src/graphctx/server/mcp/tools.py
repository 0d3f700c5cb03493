"""MCP tools over the service: ``retrieve_context`` (the full contract), ``render_context``
(the same, plus the chat messages rendered from the bundle), ``read_source`` (more of a cited
document), ``list_sources`` and ``whoami``.

Built on the SDK's low-level ``Server`` so each tool's input schema is exactly its model in
:mod:`graphctx.server.mcp.inputs` (every field described; identity, scopes and project default
from the key) and its output schema exactly the wire model; results carry the value as
``structuredContent``; the text channel has a bundle in the compact form of
:mod:`graphctx.context.compact` and any other result as the same JSON. Who is calling is decided
by the transport (``identify``): the authenticated HTTP request, or the configured key for
stdio. Without an identity every call fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
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
from pydantic import BaseModel

from graphctx.context.compact import compact_bundle_text
from graphctx.contract import ContextResponse
from graphctx.contract.request import DEFAULT_TIMEOUT_MS
from graphctx.errors import InvalidRequestError
from graphctx.server.auth import Identity
from graphctx.server.errors import AuthenticationError
from graphctx.server.mcp.errors import tool_error
from graphctx.server.mcp.inputs import (
    ContextArguments,
    ListSourcesArguments,
    ReadSourceArguments,
    WhoAmIArguments,
    parse_arguments,
    request_for,
)
from graphctx.server.models import RenderedContext, SourceExcerpt, SourceList, WhoAmI
from graphctx.server.service import GraphctxService

__all__ = ["Identify", "build_mcp_server", "server_version"]

Identify = Callable[[ServerRequestContext[Any, Any]], Identity | None]
SERVER_NAME = "graphctx"


def server_version() -> str:
    """The installed graphctx package's version (``serverInfo.version``)."""
    try:
        return version("graphctx")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def _tools() -> list[Tool]:
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    def tool(
        name: str, title: str, description: str, inputs: type[BaseModel], output: type[BaseModel]
    ) -> Tool:
        return Tool(
            name=name,
            title=title,
            description=description,
            input_schema=inputs.model_json_schema(),
            output_schema=output.model_json_schema(mode="serialization"),
            annotations=read_only,
        )

    return [
        tool(
            "retrieve_context",
            "Retrieve context",
            "Return a permission-checked evidence bundle for a question: items with "
            "content, source, version, freshness, provenance and citation ids S1..Sn, "
            "within max_tokens and timeout_ms. Only `query` is needed: the project, "
            "principal and scopes are the API key's unless narrowed.",
            ContextArguments,
            ContextResponse,
        ),
        tool(
            "render_context",
            "Render context",
            "Like retrieve_context, and also return chat messages ready for a model: the "
            "fixed system instruction, then a user message with the question and one "
            '<source id="Sn"> block per bundle item. Returns {bundle, messages}.',
            ContextArguments,
            RenderedContext,
        ),
        tool(
            "read_source",
            "Read source",
            "Read more of a cited document around one bundle item, by its chunk_id, within "
            "max_tokens; only text the caller may see is returned. Use it when an item is "
            "truncated or its context is needed.",
            ReadSourceArguments,
            SourceExcerpt,
        ),
        tool(
            "list_sources",
            "List sources",
            "List the documents of a project that the caller may see.",
            ListSourcesArguments,
            SourceList,
        ),
        tool(
            "whoami",
            "Who am I",
            "The principal this API key acts as, and the projects and scopes it may read.",
            WhoAmIArguments,
            WhoAmI,
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
        structured = result.model_dump_json()
        # The model reads the text channel: a bundle in compact form (the full one is the
        # structured content); any other result as its JSON.
        text = compact_bundle_text(result) if isinstance(result, ContextResponse) else structured
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=json.loads(structured),
        )

    return Server(
        SERVER_NAME,
        version=server_version(),
        instructions="Permission-aware GraphRAG context. Read-only. Ask with only a query; "
        "cite items by their citation ids; read_source reads more around an item.",
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _call(
    service: GraphctxService, identity: Identity, name: str, arguments: dict[str, Any]
) -> BaseModel:
    if name in ("retrieve_context", "render_context"):
        request = request_for(service, identity, parse_arguments(ContextArguments, arguments))
        if name == "render_context":
            return await service.render(identity, request, face="mcp")
        return await service.retrieve(identity, request, face="mcp")
    if name == "read_source":
        read = parse_arguments(ReadSourceArguments, arguments)
        return await service.read_source(
            identity,
            service.default_project(identity, read.namespace),
            read.chunk_id,
            principal_id=read.principal_id,
            allowed_scopes=read.allowed_scopes,
            max_tokens=read.max_tokens,
            timeout_ms=DEFAULT_TIMEOUT_MS,
        )
    if name == "list_sources":
        listing = parse_arguments(ListSourcesArguments, arguments)
        project = service.default_project(identity, listing.project_id)
        return await service.list_sources(identity, project)
    if name == "whoami":
        parse_arguments(WhoAmIArguments, arguments)
        return service.whoami(identity)
    raise InvalidRequestError(f"unknown tool {name!r}", field="name", code="unknown_tool")
