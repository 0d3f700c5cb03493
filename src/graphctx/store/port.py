"""The GraphStore port: one protocol every backend implements.

Every read takes the caller's effective scopes and applies them inside the store query, so
out-of-scope rows never compete for a top-k slot. Every read also takes a monotonic
``deadline`` (``time.monotonic()`` seconds) and raises :class:`StageTimeout` past it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from graphctx.errors import InvalidDocumentError
from graphctx.store.namespace_embedder import EmbedderRecord
from graphctx.store.records import (
    ChunkHit,
    ChunkView,
    DocumentSummary,
    DocumentWrite,
    EntityMatch,
    ExpansionPolicy,
    ExpansionResult,
    Expectation,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    NodeText,
    Relation,
    StoredVersion,
    Vector,
    WriteResult,
)

if TYPE_CHECKING:
    from graphctx.store.candidate_lists import CandidateSearch, QueryVector


class StageTimeout(Exception):
    """A store read ran past its deadline. Internal: the pipeline turns it into data."""


class GraphStore(Protocol):
    name: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def ping(self) -> None: ...

    # --- write path -------------------------------------------------------------------
    async def latest_version(self, namespace: str, document_id: str) -> StoredVersion | None: ...

    async def latest_versions(
        self, namespace: str, document_ids: Sequence[str]
    ) -> dict[str, StoredVersion]:
        """``latest_version`` of many ids in one read (one snapshot): the ids that have a
        version, each once; the others are absent."""
        ...

    async def namespace_embedder(self, namespace: str) -> EmbedderRecord | None:
        """The embedder that wrote ``namespace`` (None before its first chunk); a write
        with another one raises ``EmbedderMismatchError`` (see store.namespace_embedder)."""
        ...

    async def write_document(
        self,
        document: NewDocument,
        chunks: Sequence[NewChunk],
        embedder_name: str,
        *,
        expected: Expectation | None = None,
    ) -> WriteResult:
        """Write one version in one transaction. With ``expected``, the write lands only if
        the latest version is still the expected one inside that transaction (else
        ``DocumentConflictError``). A write that would widen an older version's scopes is
        refused (``InvalidDocumentError``, code ``scope_widening_refused``)."""
        ...

    async def write_documents(
        self, namespace: str, writes: Sequence[DocumentWrite], embedder_name: str
    ) -> list[WriteResult | InvalidDocumentError]:
        """Write a batch of documents of ``namespace`` in one transaction, with exactly the
        store contents that ``write_document`` on each in turn would leave (ids, order,
        versions). A document a rule refuses (``InvalidDocumentError``: a conflict, scope
        widening) writes nothing and gets its error in its slot; the others are written.
        Any other failure raises and writes nothing of the batch."""
        ...

    async def delete_document(
        self, namespace: str, document_id: str, *, expected: Expectation | None = None
    ) -> int:
        """Remove every version, its chunks and the graph they alone support; with
        ``expected``, only if the latest version is still the expected one."""
        ...

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

    async def search_candidates(
        self,
        namespace: str,
        query: str | None,
        query_vector: QueryVector | None,
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> CandidateSearch:
        """``fulltext_search(query)`` and ``vector_search(await query_vector)`` (each only when
        given) as one call: the same hits, scores and order as the separate calls, each list
        with its own outcome (:mod:`graphctx.store.candidate_search`), plus any visible views
        of their chunks read along the way (equal to ``fetch_chunks``' views of them)."""
        ...

    async def fetch_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[ChunkView]: ...

    async def list_documents(
        self, namespace: str, scopes: frozenset[str]
    ) -> list[DocumentSummary]: ...

    async def nodes_for_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[KnowledgeNode]: ...

    # --- graph layer (visibility checked inside the traversal, never after) ----------------
    async def expand(
        self,
        namespace: str,
        anchors: Mapping[str, float],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        """Chunks reached from the anchor chunks (``chunk_id -> score``) through knowledge
        nodes. Every chunk, node and relation on a path is visible through a visible
        supporting chunk; a blocked step is counted in ``withheld``. Anchors themselves (and,
        unless the policy allows it, other chunks of their documents) are never returned."""
        ...

    async def neighbourhood(
        self,
        namespace: str,
        node_ids: Sequence[str],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        """Evidence around seed nodes: their own supporting chunks (hop 0), then for each
        visible relation (``policy.direction``/``relation_types``) the chunks stating it and
        the chunks supporting the node at its other end (hop 1, up to ``max_hops``)."""
        ...

    async def lookup_entities(
        self,
        namespace: str,
        keys: Sequence[str],
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> list[EntityMatch]:
        """Visible nodes whose name or alias key (:func:`~graphctx.text.names.name_key`) is
        one of ``keys``, each key matched only through a visible declaration of it;
        ``node_type`` likewise, else ``None`` (:mod:`graphctx.store.declarations`)."""
        ...

    async def describe_nodes(
        self, namespace: str, node_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[NodeText]:
        """Visible nodes with their derived text, withheld unless every supporting document
        is visible to ``scopes`` (a concept summary must not leak a filtered document); the
        type only through a visible declaration of it."""
        ...

    async def document_chunks(self, namespace: str, document_id: str) -> list[ChunkView]:
        """Write path (ingest only, unscoped): the latest version's chunks in order."""
        ...
