"""``graphctx mcp-config``: the ``mcpServers`` entry an MCP client (Claude Desktop, Claude Code,
Cursor) needs to reach graphctx, ready to paste.

stdio (the default) runs ``graphctx [--store S] serve --mcp-stdio [--config C]`` with the key
in ``GRAPHCTX_MCP_STDIO_KEY``; ``--http URL`` names a running ``graphctx serve``'s streamable
HTTP endpoint with the key as a bearer token. The key itself is never printed: it is
``${NAME}`` (``--key-env``), which clients that expand variables read from the environment;
elsewhere replace it with the key. Paths are absolute, since a client starts the server in a
folder of its own.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from graphctx.cli.global_options import DEFAULT_STORE
from graphctx.store.locations import is_neo4j_location

__all__ = ["STDIO_KEY_VARIABLE", "mcp_config", "stdio_command"]

STDIO_KEY_VARIABLE = "GRAPHCTX_MCP_STDIO_KEY"  # read by graphctx.server.config


def mcp_config(args: argparse.Namespace, *, store: str | None) -> dict[str, object]:
    key = f"${{{args.key_env}}}"
    server: dict[str, object]
    if args.http:
        server = {"type": "http", "url": args.http, "headers": {"Authorization": f"Bearer {key}"}}
    else:
        if args.config is None:
            print(
                "graphctx: warning: a stdio server checks its key against a service config's"
                " keys: pass --config FILE (the file with the key's entry)",
                file=sys.stderr,
            )
        command, *prefix = stdio_command()
        server = {
            "command": command,
            "args": [*prefix, *_stdio_args(store, args.config)],
            "env": {STDIO_KEY_VARIABLE: key},
        }
    return {"mcpServers": {args.name: server}}


def stdio_command() -> list[str]:
    """How to start this installation's ``graphctx``: its script beside the interpreter (a
    virtual environment's ``bin``), else the interpreter running the CLI module."""
    interpreter = os.path.abspath(sys.executable)  # not resolved: a venv's python is a link
    script = Path(interpreter).with_name("graphctx")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [interpreter, "-m", "graphctx.cli.main"]


def _stdio_args(store: str | None, config: str | None) -> list[str]:
    args: list[str] = []
    if store is not None or config is None:  # without either, the server's cwd would decide
        location = store or DEFAULT_STORE
        args += ["--store", location if is_neo4j_location(location) else os.path.abspath(location)]
    args += ["serve", "--mcp-stdio"]
    if config is not None:
        args += ["--config", os.path.abspath(config)]
    return args
