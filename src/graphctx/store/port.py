"""The GraphStore port: one protocol every backend implements.

Every read takes the caller's effective scopes and applies them inside the store query, so
out-of-scope rows never compete for a top-k slot. Every read also takes a monotonic
``deadline`` (``time.monotonic()`` seconds) and raises :class:`StageTimeout` past it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graphctx.store.records import (
    ChunkHit,
    ChunkView,
    DocumentSummary,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    Relation,
    StoredVersion,
    Vector,
    WriteResult,
)


class StageTimeout(Exception):
    """A store read ran past its deadline. Internal: the pipeline turns it into data."""


class GraphStore(Protocol):
    name: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def ping(self) -> None: ...

    # --- write path -------------------------------------------------------------------
    async def latest_version(self, namespace: str, document_id: str) -> StoredVersion | None: ...

    async def write_document(
        self, document: NewDocument, chunks: Sequence[NewChunk], embedder_name: str
    ) -> WriteResult: ...

    async def delete_document(self, namespace: str, document_id: str) -> int: ...

    async def write_graph(
        self, namespace: str, nodes: Sequence[KnowledgeNode], relations: Sequence[Relation]
    ) -> None: ...

    # --- read path (scopes applied inside the query) -------------------------------------
    async def fulltext_search(
        self,
        namespace: str,
        query: str,
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> list[ChunkHit]: ...

    async def vector_search(
        self,
        namespace: str,
        vector: Vector,
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> list[ChunkHit]: ...

    async def fetch_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[ChunkView]: ...

    async def list_documents(
        self, namespace: str, scopes: frozenset[str]
    ) -> list[DocumentSummary]: ...

    async def nodes_for_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[KnowledgeNode]: ...
