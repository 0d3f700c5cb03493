"""What the ingest pipeline hands a graph extractor, and the extractor protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from graphctx.ingest.extract.concept_shape import ConceptShape
from graphctx.ingest.source import SourceDocument
from graphctx.store.port import GraphStore

__all__ = ["ExtractionInput", "ExtractionReport", "GraphExtractor", "extract_written"]


@dataclass(frozen=True)
class ExtractionInput:
    """A written document as an extractor sees it."""

    document_id: str
    title: str | None
    metadata: Mapping[str, str]
    relative_path: str | None  # path under the ingest root, to resolve relative links
    chunks: tuple[tuple[str, str], ...]  # (chunk_id, text), in order


@dataclass
class ExtractionReport:
    documents: int = 0
    document_nodes: int = 0
    references: int = 0
    references_unresolved: int = 0  # links to documents outside the batch
    mentions: int = 0
    concepts: int = 0
    fallback_rate: float | None = None  # share of items in no concept (concept extractors)
    concept_shape: ConceptShape | None = None  # count vs n, members, overlap (offline concepts)
    details: list[str] = field(default_factory=list)


class GraphExtractor(Protocol):
    async def extract(
        self, store: GraphStore, namespace: str, documents: Sequence[ExtractionInput]
    ) -> ExtractionReport: ...


def _relative(origin: str, root: Path) -> str | None:
    path = Path(origin.partition("#")[0])
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.name or None


async def extract_written(
    store: GraphStore,
    extractor: GraphExtractor,
    namespace: str,
    written: Sequence[tuple[SourceDocument, str]],
    root: Path,
) -> ExtractionReport:
    """Run ``extractor`` over the documents just written (their latest chunks)."""
    inputs = []
    for source, document_id in written:
        chunks = await store.document_chunks(namespace, document_id)
        inputs.append(
            ExtractionInput(
                document_id=document_id,
                title=source.metadata.title,
                metadata=dict(source.metadata.extra),
                relative_path=_relative(source.origin, root),
                chunks=tuple((c.chunk_id, c.text) for c in chunks),
            )
        )
    return await extractor.extract(store, namespace, inputs)
