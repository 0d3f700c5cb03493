"""The write path's transaction bodies: documents, versions, scope sets, graph upserts.

Each function runs inside one managed write transaction opened by
:class:`~graphctx.store.neo4j.store.Neo4jGraphStore`; semantics mirror the embedded store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import neo4j
import numpy as np
from neo4j.vector import Vector

from graphctx.errors import InvalidDocumentError
from graphctx.store.declarations import declaration_id, is_home_declaration, name_keys
from graphctx.store.namespace_embedder import EmbedderRecord, require_same_embedder
from graphctx.store.neo4j import acl, queries
from graphctx.store.neo4j.rows import fetch, fetch_one, iso, stored_version
from graphctx.store.neo4j.text_statistics import (
    TextDeltas,
    moving_rows,
    term_length,
    term_repeats,
)
from graphctx.store.records import (
    DocumentWrite,
    Expectation,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    Relation,
    StoredVersion,
    WriteOutcome,
    WriteResult,
    check_chunk_span,
    check_expectation,
    check_scopes_of_older_versions,
    fulltext_source,
)
from graphctx.text.lexical import index_terms

CHUNK_BATCH = 2_000  # chunks per CREATE_VERSIONS_WITH_CHUNKS statement (whole versions)


def version_label(document: NewDocument, previous: StoredVersion | None) -> str:
    digest = f"sha256:{document.content_hash[:12]}"
    if document.source_version is None:
        return digest
    if previous is not None and previous.version == document.source_version:
        return f"{document.source_version}+{digest}"
    return document.source_version


def chunk_embedding(document: NewDocument, chunk: NewChunk) -> Vector:
    """A chunk's embedding as it travels: a float32 ``Vector`` (Bolt 6: 4 bytes a coordinate,
    one byte string), stored by ``db.create.setNodeVectorProperty`` as a float32 array. The
    server refuses a coordinate that is not finite; it is refused here, before anything of the
    batch is sent (``ValueError``, as a chunk outside its span)."""
    embedding = np.asarray(chunk.embedding, dtype=np.float32)
    if not np.isfinite(embedding).all():
        raise ValueError(
            f"chunk {chunk.ordinal} of {document.document_id} has a NaN or infinite embedding"
        )
    return Vector(embedding)


def chunk_row(document: NewDocument, version_seq: int, chunk: NewChunk, seq: int) -> dict[str, Any]:
    """A new chunk's properties, but its embedding (:func:`chunk_embedding`)."""
    check_chunk_span(document, chunk)
    terms = index_terms(fulltext_source(document, chunk))
    return {
        "namespace": document.namespace,
        "chunk_id": f"{document.document_id}@{version_seq}#{chunk.ordinal}",
        "seq": seq,
        "ordinal": chunk.ordinal,
        "start_char": chunk.start_char,
        "end_char": chunk.end_char,
        "text": chunk.text,
        "heading_path": list(chunk.heading_path),
        "terms": terms,
        "length": term_length(terms),
        "repeats": term_repeats(terms),
        "acl_key": acl.scope_set_key(document.namespace, document.scopes),
        "acl_terms": acl.acl_terms(document.namespace, document.scopes),
    }


def document_properties(document: NewDocument, version: str, seq: int) -> dict[str, Any]:
    return {
        "namespace": document.namespace,
        "document_id": document.document_id,
        "version": version,
        "version_seq": seq,
        "content_hash": document.content_hash,
        "metadata_hash": document.metadata_hash,
        "source_uri": document.source_uri,
        "title": document.title,
        "media_type": document.media_type,
        "text": document.text,
        "created_at": iso(document.dates.created_at),
        "updated_at": iso(document.dates.updated_at),
        "valid_from": iso(document.dates.valid_from),
        "valid_to": iso(document.dates.valid_to),
        "declared_superseded_by": document.declared_superseded_by,
        "ingested_at": datetime.now(UTC).isoformat(),
        "extra_json": json.dumps(dict(document.extra), sort_keys=True, ensure_ascii=False),
        "is_latest": True,
        "scopes": sorted(document.scopes),
        "acl_key": acl.scope_set_key(document.namespace, document.scopes),
    }


@dataclass
class _BatchPlan:
    """What one segment of a batch writes, gathered document by document in order, then
    sent as a few UNWIND statements (:func:`_apply`)."""

    chunk_seq: int  # the last chunk seq handed out
    embedder: EmbedderRecord | None  # the namespace's, or the one this batch sets
    set_embedder: bool = False
    versions: list[dict[str, Any]] = field(default_factory=list)
    rescoped: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    text: TextDeltas = field(default_factory=TextDeltas)  # the scope sets' statistics
    moving: list[dict[str, Any]] = field(default_factory=list)  # documents leaving a set

    def move_to_scope_set(
        self,
        document: NewDocument,
        footprint: Sequence[Mapping[str, Any]],
        new_chunks: Sequence[Mapping[str, Any]],
    ) -> None:
        """Every existing chunk of the document moves to its new scope set (their terms are
        read in :func:`_apply`, before the re-scope); new ones join it."""
        new_key = acl.scope_set_key(document.namespace, document.scopes)
        self.text.scopes_of[new_key] = sorted(document.scopes)
        for row in new_chunks:
            self.text.move(new_key, str(row["terms"]), 1)
        if any(str(row["key"]) != new_key for row in footprint):
            self.moving.append({"document_id": document.document_id, "acl_key": new_key})

    def rescope(self, document: NewDocument) -> None:
        self.rescoped.append(
            {
                "document_id": document.document_id,
                "scopes": sorted(document.scopes),
                "acl_key": acl.scope_set_key(document.namespace, document.scopes),
                "acl_terms": acl.acl_terms(document.namespace, document.scopes),
            }
        )


def _segments(writes: Sequence[DocumentWrite]) -> list[list[DocumentWrite]]:
    """Runs of the batch without a repeated document id: each run reads its documents' state
    once, after the runs before it wrote theirs (same transaction)."""
    segments: list[list[DocumentWrite]] = [[]]
    seen: set[str] = set()
    for write in writes:
        if write.document.document_id in seen:
            segments.append([])
            seen.clear()
        seen.add(write.document.document_id)
        segments[-1].append(write)
    return [segment for segment in segments if segment]


async def write_documents(
    tx: neo4j.AsyncManagedTransaction,
    namespace: str,
    writes: Sequence[DocumentWrite],
    embedder: str,
) -> list[WriteResult | InvalidDocumentError]:
    """A batch in one transaction, as ``write_document`` on each in turn would leave it."""
    for write in writes:
        if write.document.namespace != namespace:
            raise ValueError(f"{write.document.document_id} is not in namespace {namespace!r}")
    results: list[WriteResult | InvalidDocumentError] = []
    for segment in _segments(writes):
        results += await _write_segment(tx, namespace, segment, embedder)
    return results


async def _write_segment(
    tx: neo4j.AsyncManagedTransaction,
    namespace: str,
    segment: Sequence[DocumentWrite],
    embedder: str,
) -> list[WriteResult | InvalidDocumentError]:
    rows = await fetch(
        tx,
        queries.BEGIN_DOCUMENTS_WRITE,
        namespace=namespace,
        document_ids=[write.document.document_id for write in segment],
    )
    # Read under the namespace lock: no other writer can move these documents until commit.
    begin = {str(row["document_id"]): row for row in rows}
    head = rows[0]
    stored = None
    if head["embedder"] is not None:
        stored = EmbedderRecord(str(head["embedder"]), int(head["dimension"]))
    plan = _BatchPlan(int(head["chunk_seq"]), stored)
    results: list[WriteResult | InvalidDocumentError] = []
    for write in segment:
        try:
            results.append(_plan_document(plan, write, begin[write.document.document_id], embedder))
        except InvalidDocumentError as exc:
            results.append(exc)
    await _apply(tx, namespace, plan)
    return results


def _plan_document(
    plan: _BatchPlan, write: DocumentWrite, begin: Mapping[str, Any], embedder: str
) -> WriteResult:
    """Decide one document's write and add it to ``plan``; a refusal raises before the plan
    holds anything of the document."""
    document, chunks = write.document, write.chunks
    previous = stored_version(document.document_id, begin["latest"])
    check_expectation(write.expected, previous)
    older = [frozenset(str(s) for s in row["scopes"]) for row in begin["older_scopes"]]
    record = plan.embedder
    if chunks:
        dimension = int(chunks[0].embedding.shape[0])
        if record is None:
            record = EmbedderRecord(embedder, dimension)
        else:
            require_same_embedder(document.namespace, record, embedder, dimension)
    footprint: list[Mapping[str, Any]] = begin["footprint"]
    same_content = previous is not None and (previous.content_hash, previous.metadata_hash) == (
        document.content_hash,
        document.metadata_hash,
    )
    if previous is not None and same_content:
        if previous.scopes == document.scopes:
            result = WriteResult(
                WriteOutcome.UNCHANGED, document.document_id, previous.version, 0, previous
            )
        else:
            check_scopes_of_older_versions(document, older)
            plan.rescope(document)
            plan.move_to_scope_set(document, footprint, [])
            result = WriteResult(
                WriteOutcome.SCOPES_UPDATED,
                document.document_id,
                previous.version,
                0,
                replace(previous, scopes=document.scopes),
            )
        _keep_embedder(plan, record)
        return result
    if previous is not None:
        check_scopes_of_older_versions(document, [*older, previous.scopes])
    version = version_label(document, previous)
    seq = 1 if previous is None else previous.version_seq + 1
    rows = [
        chunk_row(document, seq, chunk, plan.chunk_seq + i + 1) for i, chunk in enumerate(chunks)
    ]
    embeddings = [chunk_embedding(document, chunk) for chunk in chunks]
    _keep_embedder(plan, record)
    plan.chunk_seq += len(rows)
    plan.versions.append(document_properties(document, version, seq))
    if previous is not None:
        plan.rescope(document)
    plan.chunks += [
        {"document_id": document.document_id, "version_seq": seq, "properties": row, "embedding": e}
        for row, e in zip(rows, embeddings, strict=True)
    ]
    plan.move_to_scope_set(document, footprint, rows)
    outcome = WriteOutcome.ADDED if previous is None else WriteOutcome.NEW_VERSION
    latest = StoredVersion(
        document.document_id,
        version,
        seq,
        document.content_hash,
        document.metadata_hash,
        document.scopes,
    )
    chunk_ids = tuple(str(row["chunk_id"]) for row in rows)
    return WriteResult(outcome, document.document_id, version, len(rows), latest, chunk_ids)


def _keep_embedder(plan: _BatchPlan, record: EmbedderRecord | None) -> None:
    """A document that lands may be the namespace's first with chunks: its embedder is set."""
    if plan.embedder is None and record is not None:
        plan.embedder, plan.set_embedder = record, True


def _version_groups(plan: _BatchPlan) -> list[tuple[list[dict[str, Any]], int]]:
    """The plan's new versions with their chunks, in statements of about ``CHUNK_BATCH``
    chunks (a version is never split): ``(rows, chunk count)``."""
    chunks: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in plan.chunks:
        chunks.setdefault((row["document_id"], row["version_seq"]), []).append(
            {"properties": row["properties"], "embedding": row["embedding"]}
        )
    groups: list[tuple[list[dict[str, Any]], int]] = []
    rows: list[dict[str, Any]] = []
    count = 0
    for version in plan.versions:
        own = chunks.get((version["document_id"], version["version_seq"]), [])
        if rows and count + len(own) > CHUNK_BATCH:
            groups.append((rows, count))
            rows, count = [], 0
        rows.append({"properties": version, "chunks": own})
        count += len(own)
    if rows:
        groups.append((rows, count))
    return groups


async def _apply(tx: neo4j.AsyncManagedTransaction, namespace: str, plan: _BatchPlan) -> None:
    if plan.moving:
        moving = await fetch(
            tx, queries.MOVING_CHUNK_TERMS, namespace=namespace, documents=plan.moving
        )
        moving_rows(moving, plan.text)
    if plan.set_embedder and plan.embedder is not None:
        await fetch(
            tx,
            queries.SET_NAMESPACE_EMBEDDER,
            namespace=namespace,
            embedder=plan.embedder.name,
            dimension=plan.embedder.dimension,
        )
    if plan.rescoped:
        await fetch(
            tx, queries.SET_SCOPES_OF_ALL_VERSIONS, namespace=namespace, documents=plan.rescoped
        )
    for group, chunk_count in _version_groups(plan):
        await fetch(
            tx,
            queries.CREATE_VERSIONS_WITH_CHUNKS,
            namespace=namespace,
            documents=group,
            chunk_count=chunk_count,
        )
    await plan.text.apply(tx, namespace)


async def delete_document(
    tx: neo4j.AsyncManagedTransaction,
    namespace: str,
    document_id: str,
    expected: Expectation | None = None,
) -> int:
    await fetch(tx, queries.LOCK_EXISTING_NAMESPACE, namespace=namespace)
    if expected is not None:
        row = await fetch_one(
            tx, queries.LATEST_VERSION, namespace=namespace, document_id=document_id
        )
        check_expectation(
            expected, stored_version(document_id, None if row is None else row["latest"])
        )
    footprint = await fetch_one(
        tx, queries.DOCUMENT_FOOTPRINT, namespace=namespace, document_id=document_id
    )
    if footprint is None or int(footprint["versions"]) == 0:
        return 0
    chunk_ids = [str(cid) for cid in footprint["chunk_ids"]]
    await fetch(tx, queries.DELETE_DOCUMENT_VERSIONS, namespace=namespace, document_id=document_id)
    if chunk_ids:
        await fetch(tx, queries.PRUNE_RELATION_SUPPORT, namespace=namespace, chunk_ids=chunk_ids)
    if footprint["homed_ids"]:
        await fetch(
            tx,
            queries.DROP_MENTIONS_OF_HOMELESS_NODES,
            namespace=namespace,
            node_ids=footprint["homed_ids"],
        )
    if footprint["declarations"]:
        await fetch(
            tx,
            queries.DELETE_UNSUPPORTED_DECLARATIONS,
            namespace=namespace,
            declarations=footprint["declarations"],
        )
    if footprint["node_ids"]:
        for statement in (
            queries.DROP_NAMES_OF_UNSUPPORTED_NODES,
            queries.RETIRE_UNSUPPORTED_NODES,
        ):
            await fetch(tx, statement, namespace=namespace, node_ids=footprint["node_ids"])
    await fetch(tx, queries.DELETE_LONE_PENDING_NODES, namespace=namespace)
    deltas = TextDeltas()
    for key, terms in zip(footprint["chunk_keys"], footprint["chunk_terms"], strict=True):
        deltas.move(str(key), str(terms), -1)
    await deltas.apply(tx, namespace)
    return int(footprint["versions"])


def node_row(node: KnowledgeNode) -> dict[str, Any]:
    roles = dict(node.support_roles)
    keys = name_keys(node)
    return {
        "node_id": node.node_id,
        "kind": node.kind.value,
        "name": node.name,
        "description": node.description,
        "node_type": node.node_type,
        "name_keys": keys,
        "link": node.support_link,
        "declaration": declaration_id(node, keys),
        "home": is_home_declaration(node),
        "support": [
            {"chunk_id": chunk_id, "role": roles.get(chunk_id)}
            for chunk_id in node.supporting_chunk_ids
        ],
    }


async def write_graph(
    tx: neo4j.AsyncManagedTransaction,
    namespace: str,
    nodes: Sequence[KnowledgeNode],
    relations: Sequence[Relation],
) -> None:
    if not nodes and not relations:
        return
    lock = await fetch_one(tx, queries.LOCK_EXISTING_NAMESPACE, namespace=namespace)
    chunk_ids = sorted(
        {cid for node in nodes for cid in node.supporting_chunk_ids}
        | {cid for rel in relations for cid in rel.supporting_chunk_ids}
    )
    missing = await fetch_one(tx, queries.MISSING_CHUNKS, namespace=namespace, chunk_ids=chunk_ids)
    if lock is None or (missing is not None and missing["missing"]):
        unknown = ", ".join(sorted(chunk_ids if missing is None else missing["missing"])[:5])
        raise ValueError(f"unknown supporting chunk ids: {unknown}")
    if nodes:
        node_ids = sorted({node.node_id for node in nodes})
        await fetch(tx, queries.PROMOTE_PENDING_NODES, namespace=namespace, node_ids=node_ids)
        await fetch(
            tx, queries.UPSERT_NODES, namespace=namespace, nodes=[node_row(n) for n in nodes]
        )
    if relations:
        ends = sorted({r.source_id for r in relations} | {r.target_id for r in relations})
        await fetch(tx, queries.CREATE_PENDING_ENDS, namespace=namespace, node_ids=ends)
        base = int(lock["relation_seq"])
        await fetch(
            tx,
            queries.UPSERT_RELATIONS,
            namespace=namespace,
            relations=[
                {
                    "source_id": r.source_id,
                    "target_id": r.target_id,
                    "relation_type": r.relation_type,
                    "chunk_ids": list(r.supporting_chunk_ids),
                    "seq": base + i + 1,
                }
                for i, r in enumerate(relations)
            ],
        )
        await fetch(tx, queries.RESERVE_RELATION_SEQ, namespace=namespace, count=len(relations))
