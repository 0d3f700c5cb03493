"""Graph extraction at ingest: references, dictionary mentions, optional LLM concepts."""

from graphctx.ingest.extract.concepts import LlmConceptExtractor
from graphctx.ingest.extract.mentions import DictionaryEntry, EntityDictionary, find_mentions
from graphctx.ingest.extract.offline import OfflineExtractor, document_node_id
from graphctx.ingest.extract.port import (
    ExtractionInput,
    ExtractionReport,
    GraphDraft,
    GraphExtractor,
)
from graphctx.ingest.extract.references import Reference, ReferenceKind, find_references

__all__ = [
    "DictionaryEntry",
    "EntityDictionary",
    "ExtractionInput",
    "ExtractionReport",
    "GraphDraft",
    "GraphExtractor",
    "LlmConceptExtractor",
    "OfflineExtractor",
    "Reference",
    "ReferenceKind",
    "document_node_id",
    "find_mentions",
    "find_references",
]
