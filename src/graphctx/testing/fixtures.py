"""Test data for GraphStore suites: deterministic unit vectors, documents, span-exact chunks."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime

import numpy as np

from graphctx.store.records import (
    DocumentDates,
    NewChunk,
    NewDocument,
    Vector,
)

DIM = 16
FAR_FUTURE_S = 60.0


def far_deadline() -> float:
    """A read deadline no test reaches."""
    return time.monotonic() + FAR_FUTURE_S


def unit_vector(seed: str, dim: int = DIM) -> Vector:
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def make_document(
    namespace: str,
    document_id: str,
    text: str,
    scopes: set[str],
    *,
    superseded_by: str | None = None,
    version: str | None = None,
    title: str | None = None,
) -> NewDocument:
    return NewDocument(
        namespace=namespace,
        document_id=document_id,
        source_uri=f"test://{namespace}/{document_id}",
        scopes=frozenset(scopes),
        source_version=version,
        title=title,
        media_type="text",
        text=text,
        dates=DocumentDates(updated_at=datetime(2026, 1, 1, tzinfo=UTC)),
        declared_superseded_by=superseded_by,
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        metadata_hash=hashlib.sha256(f"{superseded_by}|{version}|{title}".encode()).hexdigest(),
    )


def paragraphs(text: str, vector_seed: str | None = None) -> list[NewChunk]:
    """Chunk at blank lines, span-exact; vectors derived from the text (or a given seed)."""
    chunks: list[NewChunk] = []
    start = 0
    for ordinal, part in enumerate(text.split("\n\n")):
        end = start + len(part)
        seed = vector_seed if vector_seed is not None else part
        chunks.append(NewChunk(ordinal, start, end, part, unit_vector(seed)))
        start = end + 2
    return chunks
