"""The ``graphctx`` command: thin commands over the provider.

Exit codes: 0 ok, 2 caller error (bad input, access denied), 3 operator error (store,
embedder, configuration). Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from graphctx.adapters import embedder_for, open_provider
from graphctx.cli.global_options import DEFAULT_STORE, store_location
from graphctx.cli.graph_commands import GRAPH_COMMANDS, extractor_from_args, run_graph_command
from graphctx.cli.lab_commands import LAB_COMMANDS, run_lab_command
from graphctx.cli.namespaces import namespace_warning
from graphctx.cli.parser import build_parser, installed_version
from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode
from graphctx.contract.parsing import parse_request
from graphctx.embed.port import load_model
from graphctx.errors import (
    CallerError,
    GraphctxError,
    InvalidRequestError,
    NotFoundError,
    StoreUnavailableError,
)
from graphctx.retrieve.authorize import ScopeGrants, StaticGrants
from graphctx.server.cli import run_server_command
from graphctx.store.locations import is_neo4j_location
from graphctx.terminal import render_bundle, render_ingest, render_ingest_errors

if TYPE_CHECKING:
    from graphctx.ingest.pipeline import IngestReport

__all__ = ["DEFAULT_STORE", "build_parser", "installed_version", "main"]

READ_COMMANDS = ("search", "documents", "delete")  # commands that must find a store


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
    grants = getattr(args, "grants", None)
    return None if grants is None else StaticGrants.from_file(grants)


def _print_json(data: object) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in ("serve", "keys"):
        return run_server_command(args)
    if args.command == "neo4j":
        from graphctx.store.neo4j.admin import init_schema_at, render_schema_report

        uri = args.uri or os.environ.get("NEO4J_URI")
        if not uri:
            raise InvalidRequestError("give --uri or set NEO4J_URI", field="uri")
        schema_report = init_schema_at(uri, os.environ)
        if args.json:
            _print_json(asdict(schema_report))
        else:
            print(render_schema_report(schema_report))
        return 0
    if args.command in LAB_COMMANDS:
        return run_lab_command(args)
    if args.command in GRAPH_COMMANDS:
        return run_graph_command(args, store_location(args), _grants(args))
    if args.command == "completion":
        from graphctx.cli.completion import completion_script

        print(completion_script(build_parser(), args.shell), end="")
        return 0
    if args.command == "mcp-config":
        from graphctx.cli.mcp_config import mcp_config

        _print_json(mcp_config(args, store=getattr(args, "store", None)))
        return 0
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
    store = store_location(args)
    if args.command in READ_COMMANDS:
        _require_existing_store(store)
    with open_provider(store, embedder=embedder, grants=_grants(args)) as provider:
        if args.command == "ingest":
            # pypdf logs each damage it recovers from or gives up on; the ingest report already
            # names the file and its typed error, so raw parser lines would only be noise.
            logging.getLogger("pypdf").setLevel(logging.ERROR)
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
                _print_json(_report_json(report))
            else:
                print(render_ingest(report))
                for line in render_ingest_errors(report):
                    print(line, file=sys.stderr)
            return 0 if not report.errors else 2  # a rejected document is bad input
        if args.command == "search":
            response = provider.retrieve(_request(args))
            print(response.model_dump_json(indent=2) if args.json else render_bundle(response))
            warning = namespace_warning(store, args.namespace)
            if warning is not None:
                print(f"graphctx: warning: {warning}", file=sys.stderr)
            return 0
        if args.command == "delete":
            removed = provider.delete_document(args.namespace, args.document_id)
            if not removed:
                raise NotFoundError(
                    f"no document {args.document_id!r} in namespace {args.namespace!r}"
                )
            if args.json:
                _print_json(
                    {
                        "namespace": args.namespace,
                        "document_id": args.document_id,
                        "deleted_versions": removed,
                    }
                )
            else:
                print(f"deleted {removed} version(s) of {args.document_id}")
            return 0
        if args.command == "documents":
            listed = provider.list_documents(args.namespace, args.scopes)
            if args.json:
                documents = [asdict(doc) for doc in listed]
                _print_json({"namespace": args.namespace, "documents": documents})
                return 0
            for doc in listed:
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
