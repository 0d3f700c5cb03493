"""Service commands: ``graphctx serve`` and ``graphctx keys hash``.

Wire into the main parser with :func:`add_server_commands` and dispatch with
:func:`run_server_command`; ``python -m graphctx.server`` runs them standalone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from graphctx.embed.spec_option import add_embedder_argument
from graphctx.errors import CallerError, ConfigurationError, GraphctxError

if TYPE_CHECKING:
    from graphctx.server.config import ServiceSettings
    from graphctx.server.workers import SharedState

__all__ = ["NO_API_KEYS", "add_server_commands", "hash_new_key", "main", "run_server_command"]

NO_API_KEYS: Final = "no_api_keys"

SERVER_COMMANDS = frozenset({"serve", "keys"})


def add_server_commands(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], *, store_option: bool = False
) -> None:
    """``serve`` and ``keys``; ``store_option`` adds ``serve --store`` (the standalone parser:
    ``graphctx``'s own parser gives every command its global ``--store``)."""
    serve = subparsers.add_parser("serve", help="run the HTTP service (REST + MCP) or stdio MCP")
    serve.add_argument("--config", type=Path, help="service config (YAML or JSON)")
    if store_option:
        serve.add_argument("--store", help="store location (overrides the config)")
    serve.add_argument("--host", help="bind address (default from config: 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default from config: 8080)")
    serve.add_argument(
        "--workers",
        type=int,
        help="HTTP worker processes (default from config: 1); they share one socket, the"
        " rate limits, failed-key budgets, metrics and explorer sessions",
    )
    add_embedder_argument(serve, default=None)  # overrides the config's ``embedder``
    serve.add_argument(
        "--mcp-stdio",
        action="store_true",
        help="serve MCP on stdin/stdout as the key in GRAPHCTX_MCP_STDIO_KEY",
    )
    serve.add_argument(
        "--allow-no-keys",
        action="store_true",
        help="start although the config has no API keys (gateway mode): a trusted gateway in"
        " front then decides identity through its headers (principal and per-project scopes,"
        " honoured only with the config's gateway.enabled and its secret); without a gateway"
        " every request is refused with 401",
    )

    keys = subparsers.add_parser("keys", help="API key helpers")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, metavar="COMMAND")
    hash_cmd = keys_sub.add_parser("hash", help="make a new API key and its config entry")
    hash_cmd.add_argument("--id", required=True, dest="key_id", help="key id, e.g. support-bot")
    hash_cmd.add_argument(
        "--stdin",
        action="store_true",
        help="hash the key read from stdin (gck_<id>_<secret>) instead of generating one",
    )
    hash_cmd.add_argument(
        "--json",
        action="store_true",
        help="print the config entry as JSON (for a JSON service config) instead of YAML",
    )


def run_server_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "keys":
            return _keys(args)
        if args.command == "serve":
            return _serve(args)
    except GraphctxError as exc:
        print(f"graphctx: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 2 if isinstance(exc, CallerError) else 3
    raise AssertionError(f"not a server command: {args.command}")


def hash_new_key(key_id: str, key: str | None = None) -> tuple[str, str]:
    """Return ``(key, hash)``: a new key for ``key_id`` (or ``key``, checked) and its hash."""
    from graphctx.server.keys import generate_key, hash_key, parse_key

    if key is None:
        key = generate_key(key_id)
    parsed = parse_key(key)
    if parsed is None or parsed.key_id != key_id:
        raise ValueError(f"a key must look like gck_{key_id}_<secret of 16+ url-safe chars>")
    return key, hash_key(key)


def _keys(args: argparse.Namespace) -> int:
    given = sys.stdin.readline().strip() if args.stdin else None
    try:
        key, hashed = hash_new_key(args.key_id, given)
    except ValueError as exc:
        print(f"graphctx: error [invalid_key]: {exc}", file=sys.stderr)
        return 2
    if given is None:
        print(f"# the key (shown once; hand it to the client): {key}", file=sys.stderr)
    if args.json:
        entry = {"id": args.key_id, "hash": hashed, "principal": args.key_id, "projects": {}}
        print(json.dumps(entry, indent=2))
        return 0
    print(
        f'- id: {args.key_id}\n  hash: "{hashed}"\n  principal: {args.key_id}\n'
        f"  projects: {{}}  # e.g. {{my-project: {{scopes: [eng], can_write: false}}}}"
    )
    return 0


def _serve(args: argparse.Namespace) -> int:
    from graphctx.extras import require_extra

    require_extra("server")
    from graphctx.server.config import load_settings

    settings = load_settings(args.config)
    workers = settings.workers if getattr(args, "workers", None) is None else args.workers
    if workers < 1:
        raise ConfigurationError("--workers must be at least 1", code="invalid_workers")
    if workers > 1 and args.mcp_stdio:
        raise ConfigurationError(
            "--mcp-stdio serves one client on stdin/stdout: it takes no --workers",
            code="invalid_workers",
        )
    if not settings.keys and not args.allow_no_keys:
        raise ConfigurationError(
            "the service config has no API keys, so every request would be refused: add one"
            " (`graphctx keys hash --id NAME`), or pass --allow-no-keys for gateway mode",
            code=NO_API_KEYS,
        )
    if workers == 1:
        return _serve_in(settings, args, None)
    shared = _shared_state()  # before the fork, and before any metric exists
    try:
        return _serve_in(settings, args, shared, workers)
    finally:
        shared.remove()


def _serve_in(
    settings: ServiceSettings,
    args: argparse.Namespace,
    shared: SharedState | None,
    workers: int = 1,
) -> int:
    import anyio
    from fastapi import FastAPI

    from graphctx.adapters import build_provider
    from graphctx.server.app import create_app
    from graphctx.server.listen import bind_listeners, run_uvicorn
    from graphctx.server.logs import configure_logging
    from graphctx.server.mcp.transport import serve_stdio
    from graphctx.server.workers import serve_workers

    configure_logging(settings.log_level)
    store = getattr(args, "store", None) or settings.store
    embedder = args.embedder or settings.embedder
    stages = None if settings.llm_stages is None else settings.llm_stages.build()
    if args.mcp_stdio:
        anyio.run(serve_stdio, settings, build_provider(store, embedder, llm_stages=stages))
        return 0
    # Bound before anything is built: a port in use is a one-line error, not a log line.
    listeners = bind_listeners(args.host or settings.host, _port(args, settings.port), workers)
    if shared is None:
        run_uvicorn(
            create_app(settings, build_provider(store, embedder, llm_stages=stages)), listeners[0]
        )
        return 0

    def worker_app() -> FastAPI:  # in each worker, after the fork
        provider = build_provider(store, embedder, llm_stages=stages)
        return create_app(settings, provider, shared=shared)

    return serve_workers(worker_app, listeners, run_uvicorn)


def _shared_state() -> SharedState:
    from graphctx.server.auth import MAX_CONCURRENT_KEY_CHECKS
    from graphctx.server.workers import SharedState

    return SharedState.create(MAX_CONCURRENT_KEY_CHECKS)


def _port(args: argparse.Namespace, configured: int) -> int:
    return configured if args.port is None else int(args.port)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphctx")
    add_server_commands(parser.add_subparsers(dest="command", required=True), store_option=True)
    return run_server_command(parser.parse_args(argv))
