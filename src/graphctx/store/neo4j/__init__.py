"""The Neo4j backend of the GraphStore port (Neo4j 2026.01 or newer). See README.md here.

It needs the driver (``pip install 'graphctx[neo4j]'``); without it, importing this package
raises MissingExtraError.
"""

from graphctx.extras import require_extra

require_extra("neo4j")

from graphctx.store.locations import is_neo4j_location  # noqa: E402
from graphctx.store.neo4j.admin import init_schema_at, render_schema_report  # noqa: E402
from graphctx.store.neo4j.location import (  # noqa: E402
    Neo4jLocation,
    parse_location,
    store_from_location,
)
from graphctx.store.neo4j.schema import SchemaReport  # noqa: E402
from graphctx.store.neo4j.store import Neo4jGraphStore, VectorStrategy  # noqa: E402

__all__ = [
    "Neo4jGraphStore",
    "Neo4jLocation",
    "SchemaReport",
    "VectorStrategy",
    "init_schema_at",
    "is_neo4j_location",
    "parse_location",
    "render_schema_report",
    "store_from_location",
]
