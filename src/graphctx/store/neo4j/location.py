"""Where a Neo4j store lives: ``neo4j://host:7687/database`` plus credentials.

Entry points build a store from a location string and an environment mapping they pass in
(nothing is read at import time)::

    store = store_from_location("neo4j://db.internal:7687/graph", os.environ)

Credentials come from the URI's user info (``neo4j://user:password@host``) or from
``NEO4J_USER`` / ``NEO4J_PASSWORD``; the database from the URI path, ``NEO4J_DATABASE`` or
``neo4j``. Ingest may use other credentials: ``NEO4J_WRITE_USER`` / ``NEO4J_WRITE_PASSWORD``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from graphctx.errors import ConfigurationError
from graphctx.store.locations import NEO4J_SCHEMES
from graphctx.store.neo4j.sessions import Auth
from graphctx.store.neo4j.store import Neo4jGraphStore

DEFAULT_DATABASE = "neo4j"
DEFAULT_USER = "neo4j"


@dataclass(frozen=True)
class Neo4jLocation:
    uri: str  # without credentials or database
    database: str
    auth: Auth
    write_auth: Auth | None

    def __repr__(self) -> str:  # never print passwords
        return f"Neo4jLocation(uri={self.uri!r}, database={self.database!r}, user={self.auth[0]!r})"


def parse_location(location: str, environ: Mapping[str, str]) -> Neo4jLocation:
    parts = urlsplit(location)
    if parts.scheme.lower() not in NEO4J_SCHEMES or not parts.hostname:
        raise ConfigurationError(f"not a Neo4j location: {location.split('@')[-1]!r}")
    user = unquote(parts.username) if parts.username else environ.get("NEO4J_USER", DEFAULT_USER)
    password = unquote(parts.password) if parts.password else environ.get("NEO4J_PASSWORD")
    if not password:
        raise ConfigurationError(
            "no Neo4j password: put it in NEO4J_PASSWORD (or the URI's user info)"
        )
    database = unquote(parts.path.strip("/")) or environ.get("NEO4J_DATABASE", DEFAULT_DATABASE)
    netloc = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    write_user = environ.get("NEO4J_WRITE_USER")
    write_password = environ.get("NEO4J_WRITE_PASSWORD")
    write_auth = None
    if write_user or write_password:
        write_auth = (write_user or user, write_password or password)
    return Neo4jLocation(
        uri=urlunsplit((parts.scheme, netloc, "", parts.query, "")),
        database=database,
        auth=(user, password),
        write_auth=write_auth,
    )


def store_from_location(location: str, environ: Mapping[str, str]) -> Neo4jGraphStore:
    """A (not yet opened) store for ``location``; raises ConfigurationError when incomplete."""
    where = parse_location(location, environ)
    return Neo4jGraphStore(where.uri, where.auth, where.database, write_auth=where.write_auth)
