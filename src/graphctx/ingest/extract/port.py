"""The graph extractor port: documents in, a graph draft out.

An extractor is handed the documents the ingest just wrote (their chunk ids and texts) and
returns a :class:`GraphDraft`: the nodes and relations to write, and its report. It is given
no store and writes nothing; the pipeline writes the draft in one transaction, so a draft is
all or nothing. ``extract`` is synchronous and may block (the LLM concept extractor asks a
chat model); the pipeline runs it in a worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from graphctx.ingest.extract.concept_shape import ConceptShape
from graphctx.store.records import KnowledgeNode, Relation

__all__ = ["ExtractionInput", "ExtractionReport", "GraphDraft", "GraphExtractor"]


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


@dataclass(frozen=True)
class GraphDraft:
    """What an extractor found: written in one transaction, or (when empty) not at all."""

    nodes: tuple[KnowledgeNode, ...]
    relations: tuple[Relation, ...]
    report: ExtractionReport

    @property
    def empty(self) -> bool:
        return not self.nodes and not self.relations


class GraphExtractor(Protocol):
    def extract(self, documents: Sequence[ExtractionInput]) -> GraphDraft:
        """The graph for ``documents``; no store, no writes."""
        ...
