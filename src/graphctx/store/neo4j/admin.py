"""Operator commands on a Neo4j store, as plain functions the CLI wires up.

``graphctx neo4j init`` is ``print(render_schema_report(init_schema_at(uri, os.environ)))``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from graphctx.store.neo4j.location import store_from_location
from graphctx.store.neo4j.schema import SchemaReport


async def _init(location: str, environ: Mapping[str, str]) -> SchemaReport:
    store = store_from_location(location, environ)
    await store.open()
    try:
        return await store.init_schema()
    finally:
        await store.close()


def init_schema_at(location: str, environ: Mapping[str, str]) -> SchemaReport:
    """Create graphctx's constraints and indexes on the server at ``location`` (idempotent).

    Uses the write credentials (``NEO4J_WRITE_USER``/``NEO4J_WRITE_PASSWORD`` when set).
    Raises ConfigurationError (missing settings, server too old, a conflicting index) or
    StoreUnavailableError (server unreachable, credentials refused).
    """
    return asyncio.run(_init(location, environ))


def render_schema_report(report: SchemaReport) -> str:
    created = ", ".join(report.created) if report.created else "nothing (already complete)"
    return (
        f"Neo4j {report.server_version} ({report.edition}): graphctx schema ready\n"
        f"created: {created}\n"
        f"indexes: {', '.join(report.indexes)}"
    )
