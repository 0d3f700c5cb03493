"""Between Neo4j rows and graphctx records: transaction helpers and conversions."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import neo4j

from graphctx.store.records import ChunkView, DocumentDates, StoredVersion, page_starts_of

Tx = neo4j.AsyncTransaction | neo4j.AsyncManagedTransaction


async def fetch(tx: Tx, query: str, **params: Any) -> list[dict[str, Any]]:
    result = await tx.run(query, params)
    return [record.data() async for record in result]


async def fetch_one(tx: Tx, query: str, **params: Any) -> dict[str, Any] | None:
    found = await fetch(tx, query, **params)
    return found[0] if found else None


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def parse_time(value: object) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def chunk_view(row: Mapping[str, Any]) -> ChunkView:
    declared = row["declared_superseded_by"]
    return ChunkView(
        chunk_id=str(row["chunk_id"]),
        document_id=str(row["document_id"]),
        document_version=str(row["version"]),
        source_uri=str(row["source_uri"]),
        title=None if row["title"] is None else str(row["title"]),
        text=str(row["text"]),
        start_char=int(row["start_char"]),
        end_char=int(row["end_char"]),
        ordinal=int(row["ordinal"]),
        scopes=frozenset(str(scope) for scope in row["scopes"]),
        dates=DocumentDates(
            parse_time(row["created_at"]),
            parse_time(row["updated_at"]),
            parse_time(row["valid_from"]),
            parse_time(row["valid_to"]),
        ),
        superseded=not row["is_latest"] or declared is not None,
        superseded_by=None if declared is None else str(declared),
        page_starts=page_starts_of(row.get("extra_json")),
    )


def stored_version(document_id: str, latest: Mapping[str, Any] | None) -> StoredVersion | None:
    if latest is None:
        return None
    return StoredVersion(
        document_id,
        str(latest["version"]),
        int(latest["version_seq"]),
        str(latest["content_hash"]),
        str(latest["metadata_hash"]),
        frozenset(str(scope) for scope in latest["scopes"]),
    )
