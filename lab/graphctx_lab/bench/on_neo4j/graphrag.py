"""neo4j-graphrag's retrievers on graphctx's indexes, each as question -> ranked document ids.

neo4j-graphrag is a benchmark-only tool, not a graphctx dependency: :func:`import_graphrag`
imports it lazily (``pip install neo4j-graphrag``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import neo4j

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import ConfigurationError
from graphctx.store.neo4j import queries
from graphctx.text.lexical import query_terms
from graphctx_lab.bench.on_neo4j.corpus import Question
from graphctx_lab.bench.on_neo4j.systems import HYBRID, HYBRID_CYPHER, HYBRID_RAW, TOP_K

__all__ = [
    "INSTALL_HINT",
    "QueryParseFailure",
    "document_of",
    "graphrag_systems",
    "graphrag_version",
    "import_graphrag",
    "lucene_terms",
]

INSTALL_HINT = (
    "the Neo4j benchmark compares against neo4j-graphrag, which is not a graphctx dependency;"
    " install it into this environment for the benchmark: pip install neo4j-graphrag"
)

# Appended to neo4j-graphrag's hybrid search, which binds `node` and `score`.
RETRIEVAL_QUERY = """
MATCH (doc:Document)-[:HAS_CHUNK]->(node)
RETURN node.chunk_id AS chunk_id, node.text AS text, doc.document_id AS document_id,
       doc.title AS title, doc.source_uri AS source_uri, score
"""


def import_graphrag() -> dict[str, ModuleType]:
    try:
        return {
            "retrievers": importlib.import_module("neo4j_graphrag.retrievers"),
            "embeddings": importlib.import_module("neo4j_graphrag.embeddings.base"),
            "types": importlib.import_module("neo4j_graphrag.types"),
        }
    except ImportError as exc:
        raise ConfigurationError(INSTALL_HINT) from exc


def graphrag_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("neo4j-graphrag")
    except PackageNotFoundError:
        return "unknown"


def lucene_terms(question: str) -> str:
    """The question's analysed terms as quoted Lucene phrases (graphctx's text, no ACL)."""
    terms = query_terms(question)
    quoted = ('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in terms)
    return " ".join(quoted) or '""'


def document_of(chunk_id: str) -> str:
    return chunk_id.split("@", 1)[0]  # chunk ids are "<document_id>@<version>#<ordinal>"


def graphrag_systems(
    graphrag: dict[str, ModuleType],
    driver: neo4j.Driver,
    database: str,
    embedder: UniversalSentenceEncoderEmbedder,
) -> dict[str, Callable[[Question], list[str]]]:
    """The neo4j-graphrag retrievers on graphctx's indexes, each as question -> ranked ids."""
    retrievers, types = graphrag["retrievers"], graphrag["types"]
    item = types.RetrieverResultItem

    def embed_query(_self: object, text: str) -> list[float]:
        return [float(x) for x in embedder.embed_query(text)]

    # A subclass of neo4j-graphrag's Embedder around graphctx's USE embedder.
    wrapper_type = type(
        "UseEmbedder", (graphrag["embeddings"].Embedder,), {"embed_query": embed_query}
    )
    wrapper = wrapper_type()

    def chunk_item(record: neo4j.Record) -> Any:
        node = record["node"]
        return item(content=node["text"], metadata={"document_id": document_of(node["chunk_id"])})

    def document_item(record: neo4j.Record) -> Any:
        return item(content=record["text"], metadata={"document_id": record["document_id"]})

    common = {
        "driver": driver,
        "vector_index_name": queries.VECTOR_INDEX,
        "fulltext_index_name": queries.FULLTEXT_INDEX,
        "embedder": wrapper,
        "neo4j_database": database,
    }
    hybrid = retrievers.HybridRetriever(
        **common, return_properties=["chunk_id", "text"], result_formatter=chunk_item
    )
    hybrid_cypher = retrievers.HybridCypherRetriever(
        **common, retrieval_query=RETRIEVAL_QUERY, result_formatter=document_item
    )

    def analysed(retriever: Any) -> Callable[[Question], list[str]]:
        def ask(question: Question) -> list[str]:
            vector = wrapper.embed_query(question.text)
            found = retriever.search(
                query_text=lucene_terms(question.text), query_vector=vector, top_k=TOP_K
            )
            return [str(i.metadata["document_id"]) for i in found.items]

        return ask

    def raw(question: Question) -> list[str]:
        try:
            found = hybrid.search(query_text=question.text, top_k=TOP_K)
        except Exception as exc:  # Lucene syntax in the question: SearchQueryParseError
            if type(exc).__name__ != "SearchQueryParseError":
                raise
            raise QueryParseFailure from exc
        return [str(i.metadata["document_id"]) for i in found.items]

    return {HYBRID: analysed(hybrid), HYBRID_CYPHER: analysed(hybrid_cypher), HYBRID_RAW: raw}


class QueryParseFailure(Exception):
    pass
