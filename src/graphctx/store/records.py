"""Frozen records that cross the GraphStore port, in both directions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from graphctx.contract import NodeKind

Vector = npt.NDArray[np.float32]


class WriteOutcome(StrEnum):
    ADDED = "added"  # first version of a new document
    NEW_VERSION = "new_version"  # content or metadata changed; the previous version is superseded
    SCOPES_UPDATED = "scopes_updated"  # only the scopes changed; applied to every version
    UNCHANGED = "unchanged"  # identical content and metadata; nothing written


@dataclass(frozen=True)
class DocumentDates:
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None


@dataclass(frozen=True)
class NewDocument:
    """A document version to write. ``content_hash`` covers the text; ``metadata_hash`` the rest."""

    namespace: str
    document_id: str
    source_uri: str
    scopes: frozenset[str]
    source_version: str | None
    title: str | None
    media_type: str
    text: str
    dates: DocumentDates
    declared_superseded_by: str | None
    content_hash: str
    metadata_hash: str
    extra: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NewChunk:
    ordinal: int
    start_char: int
    end_char: int
    text: str
    embedding: Vector
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredVersion:
    """What ingest needs to decide whether a document changed."""

    document_id: str
    version: str
    version_seq: int
    content_hash: str
    metadata_hash: str
    scopes: frozenset[str]


@dataclass(frozen=True)
class WriteResult:
    outcome: WriteOutcome
    document_id: str
    version: str
    chunks_written: int


@dataclass(frozen=True)
class ChunkHit:
    """One candidate from a store search. Higher ``score`` is better."""

    chunk_id: str
    score: float


@dataclass(frozen=True)
class ChunkView:
    """A visible chunk with everything retrieval needs about its document version."""

    chunk_id: str
    document_id: str
    document_version: str
    source_uri: str
    title: str | None
    text: str
    start_char: int
    end_char: int
    ordinal: int
    scopes: frozenset[str]
    dates: DocumentDates
    superseded: bool  # a newer version exists or the document declares a successor
    superseded_by: str | None


@dataclass(frozen=True)
class DocumentSummary:
    document_id: str
    document_version: str
    source_uri: str
    title: str | None
    chunk_count: int
    superseded: bool


@dataclass(frozen=True)
class KnowledgeNode:
    """An Entity, Concept, Claim or Evidence node, visible only through a visible chunk."""

    node_id: str
    kind: NodeKind
    name: str
    supporting_chunk_ids: tuple[str, ...]
    description: str | None = None


@dataclass(frozen=True)
class Relation:
    """A typed relation between two knowledge nodes, with the chunks that support it."""

    source_id: str
    target_id: str
    relation_type: str
    supporting_chunk_ids: tuple[str, ...]
