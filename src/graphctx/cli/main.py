"""The ``graphctx`` command: thin commands over the provider.

Exit codes: 0 ok, 2 caller error (bad input, access denied), 3 operator error (store,
embedder, configuration). Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from graphctx.adapters import embedder_for, open_provider
from graphctx.cli.graph_commands import (
    GRAPH_COMMANDS,
    add_extract_arguments,
    add_graph_commands,
    extractor_from_args,
    run_graph_command,
)
from graphctx.cli.lab_commands import (
    LAB_COMMANDS,
    add_bench_command,
    add_chaos_command,
    run_lab_command,
)
from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode
from graphctx.contract.parsing import parse_request
from graphctx.contract.request import DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT_MS
from graphctx.embed.port import load_model
from graphctx.embed.spec_option import add_embedder_argument
from graphctx.errors import (
    CallerError,
    GraphctxError,
    InvalidRequestError,
    NotFoundError,
    StoreUnavailableError,
)
from graphctx.retrieve.authorize import ScopeGrants, StaticGrants
from graphctx.server.cli import add_server_commands, run_server_command
from graphctx.store.locations import is_neo4j_location
from graphctx.terminal import render_bundle, render_ingest, render_ingest_errors

if TYPE_CHECKING:
    from graphctx.ingest.pipeline import IngestReport

DEFAULT_STORE = "graphctx.sqlite"
READ_COMMANDS = ("search", "documents", "delete")  # commands that must find a store


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
    parser.add_argument("--version", action="version", version=f"graphctx {installed_version()}")
    parser.add_argument("--store", default=DEFAULT_STORE, help="store file (embedded default)")
    parser.add_argument("--grants", type=Path, help="YAML/JSON file: principal -> scopes")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="ingest a file or folder")
    ingest.add_argument("path", type=Path)
    ingest.add_argument("--namespace", default="default")
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
    ingest.add_argument("--source-uri-prefix")
    ingest.add_argument("--json", action="store_true", help="print the report as JSON")
    add_extract_arguments(ingest)
    add_embedder_argument(ingest)

    search = sub.add_parser("search", help="retrieve an evidence bundle")
    search.add_argument("query")
    search.add_argument("--namespace", default="default")
    search.add_argument("--principal", required=True)
    search.add_argument("--scope", action="append", required=True, dest="scopes")
    search.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    search.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS)
    search.add_argument("--mode", choices=[m.value for m in RetrievalMode], default="auto")
    search.add_argument("--freshness-required-at", help="ISO 8601 timestamp with a time zone")
    search.add_argument("--trace-id")
    search.add_argument("--json", action="store_true", help="print exactly the ContextResponse")
    add_embedder_argument(search)

    delete = sub.add_parser("delete", help="delete a document (all its versions)")
    delete.add_argument("document_id")
    delete.add_argument("--namespace", default="default")

    docs = sub.add_parser("documents", help="list the documents visible to scopes")
    docs.add_argument("--namespace", default="default")
    docs.add_argument("--scope", action="append", required=True, dest="scopes")

    sub.add_parser("schema", help="print the JSON Schema of ContextRequest and ContextResponse")

    demo = sub.add_parser("demo", help="ingest the bundled corpus and compare two principals")
    demo.add_argument("--json", action="store_true")

    add_bench_command(sub)

    neo4j = sub.add_parser("neo4j", help="Neo4j backend administration")
    neo4j_sub = neo4j.add_subparsers(dest="neo4j_command", required=True)
    init = neo4j_sub.add_parser("init", help="create graphctx's constraints and indexes")
    init.add_argument("--uri", help="bolt:// or neo4j:// URI (default: $NEO4J_URI)")

    add_server_commands(sub)
    add_graph_commands(sub)
    add_chaos_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except GraphctxError as exc:
        print(f"graphctx: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 2 if isinstance(exc, CallerError) else 3
    except KeyboardInterrupt:
        print("graphctx: interrupted", file=sys.stderr)
        return 130


def _require_existing_store(location: str) -> None:
    """A read command never creates a store: a mistyped ``--store`` is an error, not an empty
    store that answers ``no_evidence``."""
    if is_neo4j_location(location) or Path(location).exists():
        return
    raise StoreUnavailableError(
        f"no store at {location}: ingest into it first, or check --store",
        retryable=False,
        code="store_missing",
    )


def _grants(args: argparse.Namespace) -> ScopeGrants | None:
    return None if args.grants is None else StaticGrants.from_file(args.grants)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in ("serve", "keys"):
        return run_server_command(args)
    if args.command == "neo4j":
        from graphctx.store.neo4j.admin import init_schema_at, render_schema_report

        uri = args.uri or os.environ.get("NEO4J_URI")
        if not uri:
            raise InvalidRequestError("give --uri or set NEO4J_URI", field="uri")
        print(render_schema_report(init_schema_at(uri, os.environ)))
        return 0
    if args.command in LAB_COMMANDS:
        return run_lab_command(args)
    if args.command in GRAPH_COMMANDS:
        return run_graph_command(args, args.store, _grants(args))
    if args.command == "schema":
        schemas = {
            "ContextRequest": ContextRequest.model_json_schema(),
            "ContextResponse": ContextResponse.model_json_schema(),
        }
        print(json.dumps(schemas, indent=2, ensure_ascii=False))
        return 0
    if args.command == "demo":
        from graphctx.demo.run import run_demo

        return run_demo(as_json=args.json)
    # Only the commands that embed take --embedder. A search loads its model first: before the
    # request's deadline starts, and so that a missing extra is reported before the store.
    embedder = embedder_for(getattr(args, "embedder", None))
    if args.command == "search":
        load_model(embedder)
    if args.command in READ_COMMANDS:
        _require_existing_store(args.store)
    with open_provider(args.store, embedder=embedder, grants=_grants(args)) as provider:
        if args.command == "ingest":
            report = provider.ingest_path(
                args.path,
                namespace=args.namespace,
                scopes=args.scopes,
                source_uri_prefix=args.source_uri_prefix,
                progress=sys.stderr.isatty(),
                extractor=extractor_from_args(args),
                scope_ceiling=args.scope_ceiling,
            )
            if args.json:
                print(json.dumps(_report_json(report), indent=2, ensure_ascii=False, default=str))
            else:
                print(render_ingest(report))
                for line in render_ingest_errors(report):
                    print(line, file=sys.stderr)
            return 0 if not report.errors else 2  # a rejected document is bad input
        if args.command == "search":
            response = provider.retrieve(_request(args))
            print(response.model_dump_json(indent=2) if args.json else render_bundle(response))
            return 0
        if args.command == "delete":
            removed = provider.delete_document(args.namespace, args.document_id)
            if not removed:
                raise NotFoundError(
                    f"no document {args.document_id!r} in namespace {args.namespace!r}"
                )
            print(f"deleted {removed} version(s) of {args.document_id}")
            return 0
        if args.command == "documents":
            for doc in provider.list_documents(args.namespace, args.scopes):
                flag = " (superseded)" if doc.superseded else ""
                print(
                    f"{doc.document_id}\tv{doc.document_version}\t{doc.chunk_count} chunks"
                    f"\t{doc.source_uri}{flag}"
                )
            return 0
    raise AssertionError(f"unhandled command {args.command}")


def _request(args: argparse.Namespace) -> ContextRequest:
    fields: dict[str, object] = {
        "query": args.query,
        "principal_id": args.principal,
        "allowed_scopes": args.scopes,
        "namespace": args.namespace,
        "retrieval_mode": RetrievalMode(args.mode),
        "max_tokens": args.max_tokens,
        "timeout_ms": args.timeout_ms,
    }
    if args.trace_id:
        fields["trace_id"] = args.trace_id
    if args.freshness_required_at:
        try:
            fields["freshness_required_at"] = datetime.fromisoformat(args.freshness_required_at)
        except ValueError as exc:
            raise InvalidRequestError(
                f"freshness_required_at: {exc}", field="freshness_required_at"
            ) from exc
    return parse_request(fields)


def _report_json(report: IngestReport) -> dict[str, object]:
    data = asdict(report)
    data["chunks_written"] = report.chunks_written
    return data


if __name__ == "__main__":
    raise SystemExit(main())
