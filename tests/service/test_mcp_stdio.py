"""MCP over stdio: a real ``python -m graphctx.server serve --mcp-stdio`` subprocess, driven by
the SDK's stdio client, acting as the key in GRAPHCTX_MCP_STDIO_KEY."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from graphctx.contract import ContextResponse
from graphctx.testing.service import FORBIDDEN_FOR_RITA, key_entries

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stdio_config(tmp_path_factory: pytest.TempPathFactory, api_keys: dict[str, str]) -> Path:
    path = tmp_path_factory.mktemp("stdio") / "service.json"
    path.write_text(json.dumps({"keys": key_entries(api_keys)}), encoding="utf-8")
    return path


def command(config: Path, store: Path) -> list[str]:
    return [
        "-m",
        "graphctx.server",
        "serve",
        "--mcp-stdio",
        "--config",
        str(config),
        "--store",
        str(store),
    ]


def text_of(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def test_stdio_tools_answer_as_the_configured_key_and_nothing_more(
    stdio_config: Path, corpus_store: Path, api_keys: dict[str, str]
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=command(stdio_config, corpus_store),
        cwd=str(REPO),
        env={"GRAPHCTX_MCP_STDIO_KEY": api_keys["rita"]},
    )
    ask: dict[str, Any] = {
        "query": "how do I roll back a deploy",
        "principal_id": "rita",
        "allowed_scopes": ["public"],
        "namespace": "alpha",
    }

    async def main() -> list[CallToolResult]:
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {
                "retrieve_context",
                "render_context",
                "read_source",
                "list_sources",
                "whoami",
            }
            return [
                await client.call_tool("retrieve_context", {"query": ask["query"]}),
                await client.call_tool("list_sources", {"project_id": "alpha"}),
                await client.call_tool("retrieve_context", {**ask, "namespace": "beta"}),
                await client.call_tool("retrieve_context", {**ask, "principal_id": "ada"}),
                await client.call_tool("retrieve_context", {**ask, "allowed_scopes": ["secret"]}),
                await client.call_tool("list_sources", {"project_id": "beta"}),
            ]

    bundle, listing, *denied = anyio.run(main)
    assert not bundle.is_error, text_of(bundle)
    answer = ContextResponse.model_validate_json(json.dumps(bundle.structured_content))
    assert {item.document_id for item in answer.items} == {"alpha-runbook"}
    assert [d["document_id"] for d in listing.structured_content["documents"]] == ["alpha-runbook"]
    assert [json.loads(text_of(r))["code"] for r in denied] == [
        "not_found",
        "principal_mismatch",
        "no_effective_scopes",
        "not_found",
    ]
    for result in (bundle, listing, *denied):
        assert not [s for s in FORBIDDEN_FOR_RITA if s in text_of(result)]


def test_stdio_refuses_to_start_without_a_valid_key(stdio_config: Path, corpus_store: Path) -> None:
    done = subprocess.run(
        [sys.executable, *command(stdio_config, corpus_store)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "GRAPHCTX_MCP_STDIO_KEY": "gck_rita_not-the-right-secret"},
    )
    assert done.returncode == 3
    assert "GRAPHCTX_MCP_STDIO_KEY" in done.stderr
    assert "Traceback" not in done.stderr
