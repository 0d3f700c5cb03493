"""``python -m graphctx_lab.neo4j_launcher --check`` (start, query over Bolt, stop) or ``--serve``.

``--check`` starts a server, runs a query over Bolt with the generated password, prints
version and timings and stops it; ``--serve`` keeps it running and prints NEO4J_* variables.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from graphctx_lab.neo4j_launcher.errors import Neo4jUnavailable
from graphctx_lab.neo4j_launcher.jars import resolve_jars
from graphctx_lab.neo4j_launcher.jvm import port_open
from graphctx_lab.neo4j_launcher.server import Neo4jServer, running_neo4j


def _bolt_query(server: Neo4jServer) -> str:
    """Prove auth works; returns a description. Uses the neo4j driver if importable."""
    try:
        neo4j = importlib.import_module("neo4j")
        neo4j.GraphDatabase  # noqa: B018 - a bare namespace package named neo4j has no driver
    except (ImportError, AttributeError):
        if not port_open(server.bolt_port):
            raise RuntimeError("bolt port closed") from None
        return "neo4j driver not importable: checked the Bolt port only"
    driver = neo4j.GraphDatabase.driver(server.uri, auth=server.auth)
    try:
        records, _, _ = driver.execute_query(
            "CALL dbms.components() YIELD versions, edition "
            "RETURN versions[0] AS v, edition AS e, 1 + 1 AS two",
            database_=server.database,
        )
        row = records[0]
        if row["two"] != 2:
            raise RuntimeError("unexpected query result")
        return f"Bolt query OK as {server.user!r}: Neo4j {row['v']} {row['e']}"
    finally:
        driver.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graphctx_lab.neo4j_launcher",
        description="Start a throwaway Neo4j Community server for tests, without Docker.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="start, query over Bolt, stop")
    mode.add_argument("--serve", action="store_true", help="start and wait for Ctrl-C")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=120.0, help="startup timeout, s")
    args = parser.parse_args(argv)

    t0 = time.monotonic()
    try:
        lib = resolve_jars(args.cache_dir)
        t_resolve = time.monotonic() - t0
        with running_neo4j(args.cache_dir, args.timeout) as server:
            t_up = time.monotonic() - t0
            print(f"neo4j {server.version} (community) on {server.uri}")
            print(f"java {server.java.major}: {server.java.executable}")
            print(f"jars: {lib}")
            print(f"resolve: {t_resolve:.1f} s, ready after {t_up:.1f} s total "
                  f"(JVM start {t_up - t_resolve:.1f} s)")  # fmt: skip
            if args.check:
                print(_bolt_query(server))
            else:
                for key, value in server.env().items():
                    print(f"export {key}={value}")
                print("Ctrl-C to stop", flush=True)
                with contextlib.suppress(KeyboardInterrupt):
                    signal.pause()
            t_stop = time.monotonic()
        print(f"stopped in {time.monotonic() - t_stop:.1f} s")
    except Neo4jUnavailable as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
