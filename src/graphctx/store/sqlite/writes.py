"""The embedded store's write path: one call per transaction, run by SqliteGraphStore._write.

Versions: unchanged content and metadata write nothing; changed content becomes a new version
and supersedes the previous one; a scope-only change rewrites the scopes of every version.
Every version of a document holds the same scopes; a write may narrow older versions' scopes,
never widen them. A conditional write (an :class:`Expectation`) re-reads the latest version
inside its ``BEGIN IMMEDIATE`` transaction and refuses when it moved.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from graphctx.errors import InvalidDocumentError
from graphctx.store.declarations import declaration_id, is_home_declaration, name_keys
from graphctx.store.namespace_embedder import EmbedderRecord, require_same_embedder
from graphctx.store.records import (
    MENTIONS,
    DocumentWrite,
    Expectation,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    Relation,
    StoredVersion,
    WriteOutcome,
    WriteResult,
    check_expectation,
    check_scopes_of_older_versions,
)
from graphctx.store.sqlite.chunk_rows import PendingChunks
from graphctx.store.sqlite.fulltext import unindex_document


def latest_stored_version(
    conn: sqlite3.Connection, namespace: str, document_id: str
) -> StoredVersion | None:
    row = conn.execute(
        """SELECT id, version, version_seq, content_hash, metadata_hash FROM documents
           WHERE namespace = ? AND document_id = ? AND is_latest = 1""",
        (namespace, document_id),
    ).fetchone()
    if row is None:
        return None
    scopes = frozenset(
        s for (s,) in conn.execute("SELECT scope FROM document_scopes WHERE doc = ?", (row[0],))
    )
    return StoredVersion(document_id, row[1], row[2], row[3], row[4], scopes)


def latest_stored_versions(
    conn: sqlite3.Connection, namespace: str, document_ids: Sequence[str]
) -> dict[str, StoredVersion]:
    found = {d: latest_stored_version(conn, namespace, d) for d in document_ids}
    return {d: version for d, version in found.items() if version is not None}


def stored_embedder(conn: sqlite3.Connection, namespace: str) -> EmbedderRecord | None:
    row = conn.execute(
        "SELECT embedder, dimension FROM namespaces WHERE namespace = ?", (namespace,)
    ).fetchone()
    return None if row is None else EmbedderRecord(str(row[0]), int(row[1]))


def _check_namespace(conn: sqlite3.Connection, namespace: str, embedder: str, dim: int) -> None:
    stored = stored_embedder(conn, namespace)
    if stored is None:
        conn.execute("INSERT INTO namespaces VALUES (?, ?, ?)", (namespace, embedder, dim))
    require_same_embedder(namespace, stored, embedder, dim)


def _version_label(document: NewDocument, previous: StoredVersion | None) -> str:
    digest = f"sha256:{document.content_hash[:12]}"
    if document.source_version is None:
        return digest
    if previous is not None and previous.version == document.source_version:
        return f"{document.source_version}+{digest}"
    return document.source_version


def _scopes_of_versions(
    conn: sqlite3.Connection, namespace: str, document_id: str, *, older_only: bool
) -> list[frozenset[str]]:
    """The scope set of each version (or of each version but the latest)."""
    found: dict[int, set[str]] = {}
    for doc, is_latest, scope in conn.execute(
        """SELECT d.id, d.is_latest, s.scope FROM documents d
           LEFT JOIN document_scopes s ON s.doc = d.id
           WHERE d.namespace = ? AND d.document_id = ?""",
        (namespace, document_id),
    ):
        if older_only and is_latest:
            continue
        found.setdefault(doc, set())
        if scope is not None:
            found[doc].add(scope)
    return [frozenset(scopes) for scopes in found.values()]


def write_document_version(
    conn: sqlite3.Connection,
    document: NewDocument,
    chunks: Sequence[NewChunk],
    embedder: str,
    expected: Expectation | None = None,
) -> WriteResult:
    """One document in the caller's transaction (a refusal raises ``InvalidDocumentError``)."""
    pending = PendingChunks(conn, document.namespace)
    result = _write_version(conn, document, chunks, embedder, expected, pending)
    pending.insert(conn)
    return result


def _write_version(
    conn: sqlite3.Connection,
    document: NewDocument,
    chunks: Sequence[NewChunk],
    embedder: str,
    expected: Expectation | None,
    pending: PendingChunks,
) -> WriteResult:
    """Write one version's rows and queue its chunks in ``pending``: nothing after the
    queueing can refuse the document."""
    dim = int(chunks[0].embedding.shape[0]) if chunks else 0
    previous = latest_stored_version(conn, document.namespace, document.document_id)
    check_expectation(expected, previous)
    if chunks:
        _check_namespace(conn, document.namespace, embedder, dim)
    same_content = previous is not None and (
        previous.content_hash,
        previous.metadata_hash,
    ) == (document.content_hash, document.metadata_hash)
    if previous is not None and same_content:
        if previous.scopes == document.scopes:
            return WriteResult(
                WriteOutcome.UNCHANGED, document.document_id, previous.version, 0, previous
            )
        check_scopes_of_older_versions(
            document,
            _scopes_of_versions(conn, document.namespace, document.document_id, older_only=True),
        )
        _replace_scopes_of_all_versions(conn, document)
        _count_layout_change(conn)
        return WriteResult(
            WriteOutcome.SCOPES_UPDATED,
            document.document_id,
            previous.version,
            0,
            replace(previous, scopes=document.scopes),
        )
    if previous is not None:
        check_scopes_of_older_versions(
            document,
            _scopes_of_versions(conn, document.namespace, document.document_id, older_only=False),
        )
    version = _version_label(document, previous)
    seq = 1 if previous is None else previous.version_seq + 1
    doc_rowid = _insert_document(conn, document, version, seq)
    if previous is not None:
        conn.execute(
            """UPDATE documents SET is_latest = 0, superseded_by_version = ?
               WHERE namespace = ? AND document_id = ? AND is_latest = 1 AND id != ?""",
            (doc_rowid, document.namespace, document.document_id, doc_rowid),
        )
        _replace_scopes_of_all_versions(conn, document)
        if previous.scopes != document.scopes:
            _count_layout_change(conn)
    else:
        conn.executemany(
            "INSERT INTO document_scopes (scope, doc) VALUES (?, ?)",
            [(scope, doc_rowid) for scope in sorted(document.scopes)],
        )
    chunk_ids = pending.add(document, doc_rowid, seq, chunks)
    outcome = WriteOutcome.ADDED if previous is None else WriteOutcome.NEW_VERSION
    latest = StoredVersion(
        document.document_id,
        version,
        seq,
        document.content_hash,
        document.metadata_hash,
        document.scopes,
    )
    return WriteResult(outcome, document.document_id, version, len(chunks), latest, chunk_ids)


def write_document_versions(
    conn: sqlite3.Connection, namespace: str, writes: Sequence[DocumentWrite], embedder: str
) -> list[WriteResult | InvalidDocumentError]:
    """A batch in the caller's transaction: each document as ``write_document_version``
    would write it in turn, inside a savepoint, so one a rule refuses leaves nothing; then
    every chunk of the batch at once (:mod:`.chunk_rows`)."""
    results: list[WriteResult | InvalidDocumentError] = []
    pending = PendingChunks(conn, namespace)
    for write in writes:
        if write.document.namespace != namespace:
            raise ValueError(f"{write.document.document_id} is not in namespace {namespace!r}")
        mark = pending.mark()
        conn.execute("SAVEPOINT document_write")
        try:
            result = _write_version(
                conn, write.document, write.chunks, embedder, write.expected, pending
            )
        except InvalidDocumentError as exc:
            conn.execute("ROLLBACK TO document_write")
            pending.rewind(mark)
            results.append(exc)
        else:
            results.append(result)
        finally:
            conn.execute("RELEASE document_write")
    pending.insert(conn)
    return results


def _insert_document(conn: sqlite3.Connection, d: NewDocument, version: str, seq: int) -> int:
    cursor = conn.execute(
        """INSERT INTO documents (namespace, document_id, version, version_seq, content_hash,
               metadata_hash, source_uri, title, media_type, text, created_at, updated_at,
               valid_from, valid_to, declared_superseded_by, superseded_by_version,
               ingested_at, extra_json, is_latest)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, 1)""",
        (
            d.namespace,
            d.document_id,
            version,
            seq,
            d.content_hash,
            d.metadata_hash,
            d.source_uri,
            d.title,
            d.media_type,
            d.text,
            _iso(d.dates.created_at),
            _iso(d.dates.updated_at),
            _iso(d.dates.valid_from),
            _iso(d.dates.valid_to),
            d.declared_superseded_by,
            datetime.now(UTC).isoformat(),
            json.dumps(dict(d.extra), sort_keys=True, ensure_ascii=False),
        ),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _count_layout_change(conn: sqlite3.Connection) -> None:
    """Chunks were deleted or re-scoped: readers' vector caches, which only append rows
    while this count holds, must reload (see :mod:`graphctx.store.sqlite.vectors`)."""
    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'layout'")


def _record_reusable_row_ids(conn: sqlite3.Connection) -> None:
    """SQLite gives a new chunk the row id after the highest one left, so after a delete every
    id from there on may name a different chunk: the vector cache re-reads those rows."""
    conn.execute(
        """INSERT INTO chunk_deletes (layout, reuse_from)
           SELECT CAST(value AS INTEGER), (SELECT coalesce(max(id), 0) + 1 FROM chunks)
           FROM meta WHERE key = 'layout'"""
    )


def _replace_scopes_of_all_versions(conn: sqlite3.Connection, d: NewDocument) -> None:
    docs = [
        row[0]
        for row in conn.execute(
            "SELECT id FROM documents WHERE namespace = ? AND document_id = ?",
            (d.namespace, d.document_id),
        )
    ]
    for doc in docs:
        conn.execute("DELETE FROM document_scopes WHERE doc = ?", (doc,))
        conn.executemany(
            "INSERT INTO document_scopes (scope, doc) VALUES (?, ?)",
            [(scope, doc) for scope in sorted(d.scopes)],
        )


def _delete_chunks(conn: sqlite3.Connection, namespace: str, doc: int) -> None:
    unindex_document(conn, namespace, doc)
    conn.execute("DELETE FROM chunks WHERE doc = ?", (doc,))


def _delete_orphan_nodes(conn: sqlite3.Connection, namespace: str) -> None:
    conn.execute(
        """DELETE FROM relations WHERE namespace = ? AND id NOT IN
           (SELECT relation FROM relation_support)""",
        (namespace,),
    )
    conn.execute(
        """DELETE FROM nodes WHERE namespace = ? AND node_id NOT IN
           (SELECT node_id FROM node_support WHERE namespace = ?)""",
        (namespace, namespace),
    )
    conn.execute(
        """DELETE FROM node_names WHERE namespace = ? AND node_id NOT IN
           (SELECT node_id FROM nodes WHERE namespace = ?)""",
        (namespace, namespace),
    )
    conn.execute(
        """DELETE FROM node_declarations WHERE namespace = ? AND declaration NOT IN
           (SELECT declaration FROM declaration_support WHERE namespace = ?)""",
        (namespace, namespace),
    )


def _chunk_rowids(conn: sqlite3.Connection, namespace: str, chunk_ids: Sequence[str]) -> list[int]:
    marks = ", ".join("?" * len(chunk_ids))
    rows = conn.execute(
        f"SELECT chunk_id, id FROM chunks WHERE namespace = ? AND chunk_id IN ({marks})",
        [namespace, *chunk_ids],
    ).fetchall()
    found = dict(rows)
    missing = sorted(set(chunk_ids) - set(found))
    if missing:
        raise ValueError(f"unknown supporting chunk ids: {', '.join(missing[:5])}")
    return [found[cid] for cid in chunk_ids]


def _declaration_rows(
    namespace: str, node: KnowledgeNode, keys: Sequence[str], rowids: Sequence[int]
) -> tuple[list[tuple[str, str, str, str, str]], list[tuple[str, str, int, int]]]:
    """Which keys and type this declaration introduced, and through which chunks."""
    declaration = declaration_id(node, keys)
    said = [("key", key) for key in keys]
    if node.node_type is not None:
        said.append(("type", node.node_type))
    home = int(is_home_declaration(node))
    return (
        [(namespace, node.node_id, attribute, value, declaration) for attribute, value in said],
        [(namespace, declaration, rowid, home) for rowid in rowids],
    )


def write_graph_records(
    conn: sqlite3.Connection,
    namespace: str,
    nodes: Sequence[KnowledgeNode],
    relations: Sequence[Relation],
) -> None:
    declared: list[tuple[str, str, str, str, str]] = []
    declared_through: list[tuple[str, str, int, int]] = []
    for node in nodes:
        conn.execute(
            """INSERT INTO nodes (namespace, node_id, kind, name, description, node_type)
               VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, node_id) DO UPDATE SET
               kind = excluded.kind, name = excluded.name,
               description = coalesce(excluded.description, nodes.description),
               node_type = coalesce(excluded.node_type, nodes.node_type)""",
            (
                namespace,
                node.node_id,
                node.kind.value,
                node.name,
                node.description,
                node.node_type,
            ),
        )
        keys = name_keys(node)
        conn.executemany(
            "INSERT OR IGNORE INTO node_names (namespace, key, node_id) VALUES (?, ?, ?)",
            [(namespace, key, node.node_id) for key in keys],
        )
        roles = dict(node.support_roles)
        rowids = _chunk_rowids(conn, namespace, node.supporting_chunk_ids)
        said, through = _declaration_rows(namespace, node, keys, rowids)
        declared.extend(said)
        declared_through.extend(through)
        # A chunk first recorded as a mere mention is upgraded by a stronger link.
        conn.executemany(
            """INSERT INTO node_support (namespace, node_id, chunk, link, role)
               VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, node_id, chunk) DO UPDATE SET
               link = CASE WHEN node_support.link = 'MENTIONS' THEN excluded.link
                           ELSE node_support.link END,
               role = coalesce(excluded.role, node_support.role)""",
            [
                (namespace, node.node_id, rowid, node.support_link, roles.get(chunk_id))
                for chunk_id, rowid in zip(node.supporting_chunk_ids, rowids, strict=True)
            ],
        )
    conn.executemany(
        """INSERT OR IGNORE INTO node_declarations (namespace, node_id, attribute, value,
           declaration) VALUES (?, ?, ?, ?, ?)""",
        declared,
    )
    conn.executemany(
        """INSERT OR IGNORE INTO declaration_support (namespace, declaration, chunk, home)
           VALUES (?, ?, ?, ?)""",
        declared_through,
    )
    for rel in relations:
        conn.execute(
            """INSERT OR IGNORE INTO relations (namespace, source_id, target_id, relation_type)
               VALUES (?, ?, ?, ?)""",
            (namespace, rel.source_id, rel.target_id, rel.relation_type),
        )
        (rel_rowid,) = conn.execute(
            """SELECT id FROM relations WHERE namespace = ? AND source_id = ?
               AND relation_type = ? AND target_id = ?""",
            (namespace, rel.source_id, rel.relation_type, rel.target_id),
        ).fetchone()
        conn.executemany(
            "INSERT OR IGNORE INTO relation_support (relation, chunk) VALUES (?, ?)",
            [
                (rel_rowid, rowid)
                for rowid in _chunk_rowids(conn, namespace, rel.supporting_chunk_ids)
            ],
        )


def delete_document_versions(
    conn: sqlite3.Connection,
    namespace: str,
    document_id: str,
    expected: Expectation | None = None,
) -> int:
    """Remove every version of a document, its chunks and the graph support they gave."""
    check_expectation(expected, latest_stored_version(conn, namespace, document_id))
    rows = conn.execute(
        "SELECT id FROM documents WHERE namespace = ? AND document_id = ?",
        (namespace, document_id),
    ).fetchall()
    homed = [
        node_id
        for (node_id,) in conn.execute(
            f"""SELECT DISTINCT s.node_id FROM node_support s JOIN chunks c ON c.id = s.chunk
                JOIN documents d ON d.id = c.doc
                WHERE d.namespace = ? AND d.document_id = ? AND s.link != '{MENTIONS}'""",
            (namespace, document_id),
        )
    ]
    for (doc,) in rows:
        _delete_chunks(conn, namespace, doc)
        conn.execute("DELETE FROM documents WHERE id = ?", (doc,))
    if rows:
        _count_layout_change(conn)
        _record_reusable_row_ids(conn)
    _drop_mentions_of_homeless_nodes(conn, namespace, homed)
    _delete_orphan_nodes(conn, namespace)
    return len(rows)


def _drop_mentions_of_homeless_nodes(
    conn: sqlite3.Connection, namespace: str, node_ids: Sequence[str]
) -> None:
    """A node whose every home link (anything but a mention) was in the deleted document goes
    with it: mentions elsewhere point at it, they do not make it (the document node that
    other chunks mention by its title would otherwise keep the deleted id and title)."""
    conn.executemany(
        f"""DELETE FROM node_support WHERE namespace = ? AND node_id = ?
            AND NOT EXISTS (SELECT 1 FROM node_support h WHERE h.namespace = ?
                            AND h.node_id = ? AND h.link != '{MENTIONS}')""",
        [(namespace, node_id, namespace, node_id) for node_id in node_ids],
    )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()
