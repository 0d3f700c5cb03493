"""The Neo4j backend of the GraphStore port (Neo4j 2026.01 or newer). See README.md here."""

from graphctx.store.neo4j.admin import init_schema_at, render_schema_report
from graphctx.store.neo4j.location import (
    Neo4jLocation,
    is_neo4j_location,
    parse_location,
    store_from_location,
)
from graphctx.store.neo4j.schema import SchemaReport
from graphctx.store.neo4j.store import Neo4jGraphStore, VectorStrategy

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
