"""``graphctx mcp-config``: what it prints is what an MCP client runs. The stdio entry is
started exactly as printed (the key variable expanded, as clients do) by the official MCP SDK
client, which initializes and lists the tools."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

from graphctx.testing.service import key_entries

TOOLS = {"retrieve_context", "render_context", "read_source", "list_sources", "whoami"}


def mcp_config(*args: str | Path, cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", "mcp-config", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    config: dict[str, object] = json.loads(done.stdout)
    return config


def expand(value: str, environ: dict[str, str]) -> str:
    """``${NAME}`` as a client that expands variables reads it."""
    return re.sub(r"\$\{(\w+)\}", lambda m: environ[m.group(1)], value)


def test_the_printed_stdio_config_starts_a_server_the_sdk_client_initializes(
    tmp_path: Path, corpus_store: Path, api_keys: dict[str, str]
) -> None:
    service = tmp_path / "service.json"
    service.write_text(json.dumps({"keys": key_entries(api_keys)}), encoding="utf-8")
    config = mcp_config(
        "--config", service.name, "--key-env", "RITA_KEY", "--store", corpus_store, cwd=tmp_path
    )
    servers = config["mcpServers"]
    assert isinstance(servers, dict)
    entry = servers["graphctx"]
    assert entry["env"] == {"GRAPHCTX_MCP_STDIO_KEY": "${RITA_KEY}"}
    assert all(not a.startswith(".") for a in entry["args"])  # paths are absolute
    environ = {"RITA_KEY": api_keys["rita"]}
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={k: expand(v, environ) for k, v in entry["env"].items()},
        cwd=str(Path(os.sep)),  # a client starts it in a folder of its own
    )

    async def session() -> tuple[set[str], CallToolResult]:
        async with Client(params) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            return tools, await client.call_tool("whoami", {})

    tools, whoami = anyio.run(session)
    assert tools == TOOLS
    assert whoami.structured_content == {
        "principal_id": "rita",
        "projects": [{"project_id": "alpha", "scopes": ["public"]}],
    }


def test_the_http_config_sends_the_key_from_the_named_variable_as_a_bearer(tmp_path: Path) -> None:
    config = mcp_config(
        "--http", "http://127.0.0.1:8080/mcp", "--key-env", "BOT_KEY", "--name", "docs",
        cwd=tmp_path,
    )  # fmt: skip
    assert config == {
        "mcpServers": {
            "docs": {
                "type": "http",
                "url": "http://127.0.0.1:8080/mcp",
                "headers": {"Authorization": "Bearer ${BOT_KEY}"},
            }
        }
    }
