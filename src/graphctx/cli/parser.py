"""The ``graphctx`` argument parser: every command, every option with its help text."""

from __future__ import annotations

import argparse
from importlib import metadata
from pathlib import Path

from graphctx.cli.global_options import add_global_options, spread_global_options
from graphctx.cli.graph_commands import add_extract_arguments, add_graph_commands
from graphctx.cli.lab_commands import add_bench_command, add_chaos_command
from graphctx.contract import RetrievalMode
from graphctx.contract.request import DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT_MS
from graphctx.embed.spec_option import add_embedder_argument
from graphctx.server.cli import add_server_commands

__all__ = ["COMPLETION_SHELLS", "build_parser", "installed_version"]

COMPLETION_SHELLS = ("bash", "zsh")
NAMESPACE_HELP = "namespace (a hard partition of the store; default: default)"
JSON_HELP = "print the result as JSON on stdout (shapes in the README's CLI section)"


def installed_version() -> str:
    """The version in the installed distribution's metadata (pyproject's ``version``)."""
    try:
        return metadata.version("graphctx")
    except metadata.PackageNotFoundError:  # sources on sys.path that pip never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphctx", description="Permission-aware GraphRAG context for AI agents."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"graphctx {installed_version()}",
        help="print graphctx's version and exit",
    )
    add_global_options(parser, top_level=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_ingest(sub)
    _add_search(sub)

    delete = sub.add_parser("delete", help="delete a document (all its versions)")
    delete.add_argument("document_id", help="the document's id (document_id in its metadata)")
    delete.add_argument("--namespace", default="default", help=NAMESPACE_HELP)
    delete.add_argument("--json", action="store_true", help=JSON_HELP)

    docs = sub.add_parser("documents", help="list the documents visible to scopes")
    docs.add_argument("--namespace", default="default", help=NAMESPACE_HELP)
    docs.add_argument(
        "--scope",
        action="append",
        required=True,
        dest="scopes",
        help="list documents any of these scopes may read (repeatable)",
    )
    docs.add_argument("--json", action="store_true", help=JSON_HELP)

    sub.add_parser("schema", help="print the JSON Schema of ContextRequest and ContextResponse")

    demo = sub.add_parser("demo", help="ingest the bundled corpus and compare two principals")
    demo.add_argument("--json", action="store_true", help="print every bundle as JSON")

    add_bench_command(sub)

    neo4j = sub.add_parser("neo4j", help="Neo4j backend administration")
    neo4j_sub = neo4j.add_subparsers(dest="neo4j_command", required=True, metavar="COMMAND")
    init = neo4j_sub.add_parser("init", help="create graphctx's constraints and indexes")
    init.add_argument("--uri", help="bolt:// or neo4j:// URI (default: $NEO4J_URI)")
    init.add_argument("--json", action="store_true", help=JSON_HELP)

    add_server_commands(sub)
    add_graph_commands(sub)
    add_chaos_command(sub)
    _add_mcp_config(sub)

    completion = sub.add_parser("completion", help="print a shell completion script")
    completion.add_argument(
        "shell",
        choices=COMPLETION_SHELLS,
        help="bash: source it, or save it as ~/.local/share/bash-completion/completions/graphctx;"
        " zsh: save it as _graphctx in a folder on $fpath",
    )

    spread_global_options(parser)
    return parser


def _add_ingest(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ingest = sub.add_parser("ingest", help="ingest a file or folder")
    ingest.add_argument("path", type=Path, help="file or folder")
    ingest.add_argument("--namespace", default="default", help=NAMESPACE_HELP)
    ingest.add_argument(
        "--scope",
        action="append",
        default=[],
        dest="scopes",
        help="scope for documents that name none of their own (repeatable)",
    )
    ingest.add_argument(
        "--scope-ceiling",
        action="append",
        dest="scope_ceiling",
        help="reject documents whose own scopes name anything else (repeatable)",
    )
    ingest.add_argument(
        "--source-uri-prefix",
        metavar="PREFIX",
        help="prefix for source_uri of documents that name none (default: their path)",
    )
    ingest.add_argument("--json", action="store_true", help="print the report as JSON")
    add_extract_arguments(ingest)
    add_embedder_argument(ingest)


def _add_search(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    search = sub.add_parser("search", help="retrieve an evidence bundle")
    search.add_argument("query", help="the question, in natural language")
    search.add_argument("--namespace", default="default", help=NAMESPACE_HELP)
    search.add_argument(
        "--principal", required=True, help="who asks (principal_id; checked against --grants)"
    )
    search.add_argument(
        "--scope",
        action="append",
        required=True,
        dest="scopes",
        help="a scope the principal may read (repeatable); nothing outside them is returned",
    )
    search.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help=f"hard token budget of the bundle (default: {DEFAULT_MAX_TOKENS})",
    )
    search.add_argument(
        "--timeout-ms",
        type=int,
        default=DEFAULT_TIMEOUT_MS,
        help=f"deadline of the retrieval in milliseconds (default: {DEFAULT_TIMEOUT_MS})",
    )
    search.add_argument(
        "--mode",
        choices=[m.value for m in RetrievalMode],
        default="auto",
        help="retrieval mode (default: auto, the router picks)",
    )
    search.add_argument(
        "--freshness-required-at",
        metavar="TIMESTAMP",
        help="ISO 8601 timestamp with a time zone: judge freshness as of then",
    )
    search.add_argument("--trace-id", help="trace id to carry (default: a new one)")
    search.add_argument("--json", action="store_true", help="print exactly the ContextResponse")
    add_embedder_argument(search)


def _add_mcp_config(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp_config = sub.add_parser(
        "mcp-config",
        help="print an mcpServers JSON configuration for MCP clients (stdio, or HTTP with --http)",
    )
    mcp_config.add_argument(
        "--http",
        metavar="URL",
        help="configure streamable HTTP at URL (e.g. http://127.0.0.1:8080/mcp) instead of stdio",
    )
    mcp_config.add_argument(
        "--key-env",
        default="GRAPHCTX_API_KEY",
        metavar="NAME",
        help="environment variable the client takes the API key from (default: GRAPHCTX_API_KEY)",
    )
    mcp_config.add_argument(
        "--config",
        metavar="FILE",
        help="stdio: the service config (with the key's entry) the server reads",
    )
    mcp_config.add_argument(
        "--name", default="graphctx", help="the server's name in mcpServers (default: graphctx)"
    )
