"""Constraints and indexes (``graphctx neo4j init``), and the server version check.

Everything is ``IF NOT EXISTS``, so init is idempotent and safe to run on every ingest. A graph
written before a structure existed is migrated when its constraint is created: legacy
declarations, and the write-time full-text statistics (``Chunk.length``,
``ScopeSet.total_length``, term counts); until then the read path refuses to score full text
from a graph without them (``ConfigurationError``). Term counts kept in the older layout (one
``TermCount`` node per scope set and term) are converted to ``Term`` nodes by every init that
finds one left (an interrupted conversion resumes; reads are refused until it is done), and so
are a chunk written before ``repeats`` and a Term before its per-scope-set peaks (read on
the plain bound until then). After
creating, init waits until the indexes are online and checks that an index with a graphctx name
really has graphctx's definition (an operator-made index with the same name but another analyser
or filter would silently break search or the ACL filter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import neo4j

from graphctx.errors import ConfigurationError
from graphctx.store.neo4j import queries

MIN_SERVER_VERSION = (2026, 1)  # the SEARCH clause with in-index filters
MIN_SERVER_TEXT = "2026.01"
INDEX_ONLINE_TIMEOUT_S = 300
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)")


@dataclass(frozen=True)
class SchemaReport:
    """What ``init_schema`` found: the server and the graphctx indexes, all online."""

    server_version: str
    edition: str
    indexes: tuple[str, ...]
    created: tuple[str, ...]  # empty when the schema was already complete


def parse_version(version: str) -> tuple[int, int]:
    match = _VERSION_RE.match(version)
    if match is None:
        raise ConfigurationError(f"cannot parse the Neo4j server version {version!r}")
    return int(match.group(1)), int(match.group(2))


def check_server_version(version: str) -> None:
    if parse_version(version) < MIN_SERVER_VERSION:
        raise ConfigurationError(
            f"Neo4j {version} is too old: graphctx needs {MIN_SERVER_TEXT} or newer"
            " (the SEARCH clause filters vector search by scope inside the index)"
        )


_EXPECTED: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    queries.VECTOR_INDEX: (
        "VECTOR",
        ["embedding", "acl_key"],
        {"vector.similarity_function": "COSINE"},
    ),
    queries.FULLTEXT_INDEX: (
        "FULLTEXT",
        ["terms", "acl_terms"],
        {"fulltext.analyzer": queries.FULLTEXT_ANALYZER},
    ),
}


def verify_indexes(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """Check the graphctx search indexes exist with graphctx's definition."""
    by_name = {str(row["name"]): row for row in rows}
    for name, (kind, properties, config) in _EXPECTED.items():
        row = by_name.get(name)
        if row is None:
            raise ConfigurationError(f"index {name} is missing: run `graphctx neo4j init`")
        actual_config = (row.get("options") or {}).get("indexConfig") or {}
        wrong = (
            row["type"] != kind
            or row["labelsOrTypes"] != ["Chunk"]
            or list(row["properties"]) != properties
            or any(actual_config.get(key) != value for key, value in config.items())
        )
        if wrong:
            raise ConfigurationError(
                f"index {name} exists with another definition ({row['type']} on"
                f" {row['labelsOrTypes']} {row['properties']}, {actual_config});"
                " drop it and run `graphctx neo4j init`"
            )
    return tuple(sorted(by_name))


async def _graphctx_indexes(session: neo4j.AsyncSession) -> list[dict[str, Any]]:
    result = await session.run(queries.SHOW_GRAPHCTX_INDEXES)
    return [record.data() async for record in result]


async def _convert_legacy_term_counts(session: neo4j.AsyncSession) -> None:
    result = await session.run(queries.LEGACY_TERM_COUNTS_LEFT)
    if (await result.single(strict=True))["left"]:
        for statement in queries.CONVERT_LEGACY_TERM_COUNTS:
            await (await session.run(statement)).consume()


async def _backfill_repeats(session: neo4j.AsyncSession) -> None:
    result = await session.run(queries.CHUNKS_WITHOUT_REPEATS)
    if (await result.single(strict=True))["left"]:
        await (await session.run(queries.BACKFILL_REPEATS)).consume()


async def _backfill_term_peaks(session: neo4j.AsyncSession) -> None:
    result = await session.run(queries.TERMS_WITHOUT_PEAKS)
    if (await result.single(strict=True))["left"]:
        await (await session.run(queries.BACKFILL_TERM_PEAKS)).consume()


async def init_schema(driver: neo4j.AsyncDriver, database: str) -> SchemaReport:
    """Create missing constraints and indexes, wait until online, verify the definitions.

    Idempotent and cheap when the schema is complete (four reads, no schema write).
    """
    async with driver.session(database=database) as session:
        result = await session.run(queries.SERVER_COMPONENTS)
        record = await result.single(strict=True)
        version, edition = str(record["version"]), str(record["edition"])
        check_server_version(version)
        rows = await _graphctx_indexes(session)
        online = {str(row["name"]) for row in rows if row["state"] == "ONLINE"}
        missing = [name for name in queries.SCHEMA_STATEMENTS if name not in online]
        if missing:
            for name in missing:
                await (await session.run(queries.SCHEMA_STATEMENTS[name])).consume()
            await (
                await session.run(queries.AWAIT_INDEXES, timeout_s=INDEX_ONLINE_TIMEOUT_S)
            ).consume()
            if queries.DECLARATION_CONSTRAINT in missing:
                await (await session.run(queries.BACKFILL_LEGACY_DECLARATIONS)).consume()
            if queries.TERM_COUNT_CONSTRAINT in missing:
                for statement in queries.BACKFILL_TEXT_STATISTICS:
                    await (await session.run(statement)).consume()
            rows = await _graphctx_indexes(session)
        await _convert_legacy_term_counts(session)
        await _backfill_repeats(session)
        await _backfill_term_peaks(session)
    return SchemaReport(version, edition, verify_indexes(rows), tuple(missing))
