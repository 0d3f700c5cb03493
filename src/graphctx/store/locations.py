"""Which backend a store location names, answerable without any backend's driver installed.

The entry points ask this before they choose an adapter: ``neo4j://...`` and ``bolt://...``
are a Neo4j server (the neo4j extra), anything else is an embedded store file.
"""

from __future__ import annotations

from typing import Final

__all__ = ["NEO4J_SCHEMES", "is_neo4j_location"]

NEO4J_SCHEMES: Final = ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")


def is_neo4j_location(location: str) -> bool:
    return location.split("://", 1)[0].lower() in NEO4J_SCHEMES and "://" in location
