"""SqliteGraphStore: the embedded default GraphStore, one SQLite file on disk.

Writes run in one ``BEGIN IMMEDIATE`` transaction per document, so a crash leaves either the
whole new version or nothing. Reads use per-thread connections with ``query_only`` on, and a
progress handler that aborts a query past its deadline. Every read applies the caller's scopes
inside the SQL (or, for vectors, before scoring).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import numpy as np

from graphctx.contract import NodeKind
from graphctx.errors import ConfigurationError, StoreUnavailableError
from graphctx.store.port import StageTimeout
from graphctx.store.records import (
    ChunkHit,
    ChunkView,
    DocumentDates,
    DocumentSummary,
    EntityMatch,
    ExpansionPolicy,
    ExpansionResult,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    NodeText,
    Relation,
    StoredVersion,
    Vector,
    WriteOutcome,
    WriteResult,
    name_key,
)
from graphctx.store.sqlite import graph, schema
from graphctx.store.sqlite.lexical import (
    index_terms,
    or_expression,
    prune_common_terms,
    query_terms,
)
from graphctx.store.sqlite.vectors import VectorCache, top_k_visible

T = TypeVar("T")
PROGRESS_STEPS = 2_000  # SQLite VM steps between deadline checks

_VIEW_COLUMNS = """
    c.chunk_id, d.document_id, d.version, d.source_uri, d.title, c.text, c.start_char,
    c.end_char, c.ordinal, d.id, d.created_at, d.updated_at, d.valid_from, d.valid_to,
    d.is_latest, d.declared_superseded_by, d.superseded_by_version
"""


def _scope_clause(scopes: frozenset[str], doc_column: str) -> tuple[str, list[str]]:
    marks = ", ".join("?" * len(scopes))
    return (
        f"{doc_column} IN (SELECT doc FROM document_scopes WHERE scope IN ({marks}))",
        sorted(scopes),
    )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class SqliteGraphStore:
    """The embedded store. ``path`` is the database file; it is created on ``open()``."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._vectors = VectorCache()
        self._opened = False

    # --- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        await asyncio.to_thread(self._open_sync)

    def _open_sync(self) -> None:
        if self._opened:
            return
        if not self.path.parent.exists():
            raise StoreUnavailableError(f"directory {self.path.parent} does not exist")
        writer = schema.connect(self.path, read_only=False)
        try:
            schema.initialise(writer, self.path)
        except Exception:
            writer.close()
            raise
        self._writer = writer
        self._opened = True

    async def close(self) -> None:
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._local = threading.local()
        self._vectors.clear()
        self._opened = False

    async def ping(self) -> None:
        await self._read(lambda conn: conn.execute("SELECT 1").fetchone(), None)

    # --- connections -----------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection:
        if not self._opened:
            raise StoreUnavailableError("store is not open")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = schema.connect(self.path, read_only=True)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    async def _read(self, work: Callable[[sqlite3.Connection], T], deadline: float | None) -> T:
        def run() -> T:
            conn = self._reader()
            if deadline is not None:
                conn.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)
            try:
                if deadline is not None and time.monotonic() > deadline:
                    raise StageTimeout("deadline passed before the query started")
                return work(conn)
            except sqlite3.OperationalError as exc:
                if "interrupted" in str(exc):
                    raise StageTimeout("store query interrupted at the deadline") from exc
                raise StoreUnavailableError(f"store read failed: {exc}") from exc
            except sqlite3.DatabaseError as exc:
                raise StoreUnavailableError(f"store read failed: {exc}") from exc
            finally:
                conn.set_progress_handler(None, 0)

        return await asyncio.to_thread(run)

    async def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            if self._writer is None:
                raise StoreUnavailableError("store is not open")
            with self._write_lock:
                conn = self._writer
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    result = work(conn)
                    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
                    conn.execute("COMMIT")
                    return result
                except BaseException as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if isinstance(exc, sqlite3.Error):
                        raise StoreUnavailableError(f"store write failed: {exc}") from exc
                    raise

        return await asyncio.to_thread(run)

    # --- write path ------------------------------------------------------------------------
    async def latest_version(self, namespace: str, document_id: str) -> StoredVersion | None:
        return await self._read(lambda conn: _latest(conn, namespace, document_id), None)

    async def write_document(
        self, document: NewDocument, chunks: Sequence[NewChunk], embedder_name: str
    ) -> WriteResult:
        return await self._write(
            lambda conn: _write_document(conn, document, chunks, embedder_name)
        )

    async def delete_document(self, namespace: str, document_id: str) -> int:
        def work(conn: sqlite3.Connection) -> int:
            rows = conn.execute(
                "SELECT id FROM documents WHERE namespace = ? AND document_id = ?",
                (namespace, document_id),
            ).fetchall()
            for (doc,) in rows:
                _delete_chunks(conn, doc)
                conn.execute("DELETE FROM documents WHERE id = ?", (doc,))
            _delete_orphan_nodes(conn, namespace)
            return len(rows)

        return await self._write(work)

    async def write_graph(
        self, namespace: str, nodes: Sequence[KnowledgeNode], relations: Sequence[Relation]
    ) -> None:
        await self._write(lambda conn: _write_graph(conn, namespace, nodes, relations))

    # --- read path -------------------------------------------------------------------------
    async def fulltext_search(
        self, namespace: str, query: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        terms = query_terms(query)
        if not terms or not scopes:
            return []
        clause, params = _scope_clause(scopes, "c.doc")
        sql = f"""
            SELECT c.chunk_id, bm25(chunk_fts) AS rank
            FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid
            WHERE chunk_fts MATCH ? AND c.namespace = ? AND {clause}
            ORDER BY rank, c.id LIMIT ?
        """

        def work(conn: sqlite3.Connection) -> list[ChunkHit]:
            marks = ", ".join("?" * len(terms))
            frequency = dict(
                conn.execute(
                    f"SELECT term, doc FROM chunk_fts_vocab WHERE term IN ({marks})", terms
                ).fetchall()
            )
            total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            expression = or_expression(prune_common_terms(terms, frequency, total))
            if expression is None:
                return []
            rows = conn.execute(sql, [expression, namespace, *params, limit]).fetchall()
            return [ChunkHit(chunk_id, -float(rank)) for chunk_id, rank in rows]

        return await self._read(work, deadline)

    async def vector_search(
        self, namespace: str, vector: Vector, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        if not scopes:
            return []

        def work(conn: sqlite3.Connection) -> list[ChunkHit]:
            generation = int(
                conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
            )
            data = self._vectors.matrix_for(conn, namespace, generation)
            if data.matrix.shape[0] and data.matrix.shape[1] != vector.shape[0]:
                raise ConfigurationError(
                    f"query vector has dimension {vector.shape[0]} but namespace {namespace!r}"
                    f" stores {data.matrix.shape[1]}: use the embedder it was ingested with"
                )
            if time.monotonic() > deadline:
                raise StageTimeout("vector search passed its deadline")
            best = top_k_visible(data, vector, scopes, limit)
            ids = _chunk_ids(conn, [rowid for rowid, _ in best])
            return [ChunkHit(ids[rowid], score) for rowid, score in best]

        return await self._read(work, deadline)

    async def fetch_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[ChunkView]:
        if not chunk_ids or not scopes:
            return []
        clause, params = _scope_clause(scopes, "d.id")
        id_marks = ", ".join("?" * len(chunk_ids))
        sql = f"""
            SELECT {_VIEW_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc
            WHERE c.namespace = ? AND c.chunk_id IN ({id_marks}) AND {clause}
        """

        def work(conn: sqlite3.Connection) -> list[ChunkView]:
            rows = conn.execute(sql, [namespace, *chunk_ids, *params]).fetchall()
            scope_map = _scopes_of(conn, {row[9] for row in rows})
            views = {row[0]: _view(row, scope_map[row[9]]) for row in rows}
            return [views[cid] for cid in chunk_ids if cid in views]

        return await self._read(work, deadline)

    async def list_documents(self, namespace: str, scopes: frozenset[str]) -> list[DocumentSummary]:
        if not scopes:
            return []
        clause, params = _scope_clause(scopes, "d.id")
        sql = f"""
            SELECT d.document_id, d.version, d.source_uri, d.title,
                   (SELECT count(*) FROM chunks c WHERE c.doc = d.id),
                   d.is_latest = 0 OR d.declared_superseded_by IS NOT NULL
            FROM documents d WHERE d.namespace = ? AND {clause}
            ORDER BY d.document_id, d.version_seq
        """

        def work(conn: sqlite3.Connection) -> list[DocumentSummary]:
            rows = conn.execute(sql, [namespace, *params]).fetchall()
            return [DocumentSummary(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

        return await self._read(work, None)

    async def nodes_for_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[KnowledgeNode]:
        if not chunk_ids or not scopes:
            return []
        clause, params = _scope_clause(scopes, "c.doc")
        id_marks = ", ".join("?" * len(chunk_ids))
        sql = f"""
            SELECT n.node_id, n.kind, n.name, n.node_type, c.chunk_id
            FROM node_support s
            JOIN chunks c ON c.id = s.chunk
            JOIN nodes n ON n.namespace = s.namespace AND n.node_id = s.node_id
            WHERE s.namespace = ? AND c.chunk_id IN ({id_marks}) AND {clause}
            ORDER BY n.node_id, c.chunk_id
        """

        def work(conn: sqlite3.Connection) -> list[KnowledgeNode]:
            support: dict[str, list[str]] = {}
            info: dict[str, tuple[str, str, str | None]] = {}
            for node_id, kind, name, node_type, chunk_id in conn.execute(
                sql, [namespace, *chunk_ids, *params]
            ):
                support.setdefault(node_id, []).append(chunk_id)
                info[node_id] = (kind, name, node_type)
            texts = {t.node_id: t for t in graph.describe_nodes(conn, namespace, [*info], scopes)}
            # Derived text rule: the name is shown only when every supporting document is
            # visible; otherwise the node is named by its id.
            return [
                KnowledgeNode(
                    node_id,
                    NodeKind(info[node_id][0]),
                    texts[node_id].name or node_id if node_id in texts else node_id,
                    tuple(chunks),
                    None,
                    node_type=info[node_id][2],
                )
                for node_id, chunks in support.items()
            ]

        return await self._read(work, deadline)

    # --- graph layer -----------------------------------------------------------------------
    async def expand(
        self,
        namespace: str,
        anchors: Mapping[str, float],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        if not anchors or not scopes:
            return ExpansionResult(())
        return await self._read(
            lambda conn: graph.expand(conn, namespace, anchors, scopes, policy, deadline),
            deadline,
        )

    async def neighbourhood(
        self,
        namespace: str,
        node_ids: Sequence[str],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        if not node_ids or not scopes:
            return ExpansionResult(())
        return await self._read(
            lambda conn: graph.neighbourhood(conn, namespace, node_ids, scopes, policy, deadline),
            deadline,
        )

    async def lookup_entities(
        self,
        namespace: str,
        keys: Sequence[str],
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> list[EntityMatch]:
        return await self._read(
            lambda conn: graph.lookup_entities(conn, namespace, keys, scopes, limit), deadline
        )

    async def describe_nodes(
        self, namespace: str, node_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[NodeText]:
        return await self._read(
            lambda conn: graph.describe_nodes(conn, namespace, node_ids, scopes), deadline
        )

    async def document_chunks(self, namespace: str, document_id: str) -> list[ChunkView]:
        sql = f"""
            SELECT {_VIEW_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc
            WHERE d.namespace = ? AND d.document_id = ? AND d.is_latest = 1
            ORDER BY c.ordinal
        """

        def work(conn: sqlite3.Connection) -> list[ChunkView]:
            rows = conn.execute(sql, (namespace, document_id)).fetchall()
            scope_map = _scopes_of(conn, {row[9] for row in rows})
            return [_view(row, scope_map[row[9]]) for row in rows]

        return await self._read(work, None)


# --- helpers running inside a connection --------------------------------------------------
def _latest(conn: sqlite3.Connection, namespace: str, document_id: str) -> StoredVersion | None:
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


def _check_namespace(conn: sqlite3.Connection, namespace: str, embedder: str, dim: int) -> None:
    row = conn.execute(
        "SELECT embedder, dimension FROM namespaces WHERE namespace = ?", (namespace,)
    ).fetchone()
    if row is None:
        conn.execute("INSERT INTO namespaces VALUES (?, ?, ?)", (namespace, embedder, dim))
    elif (row[0], row[1]) != (embedder, dim):
        raise ConfigurationError(
            f"namespace {namespace!r} was ingested with embedder {row[0]} ({row[1]} dims);"
            f" refusing to mix in {embedder} ({dim} dims)"
        )


def _version_label(document: NewDocument, previous: StoredVersion | None) -> str:
    digest = f"sha256:{document.content_hash[:12]}"
    if document.source_version is None:
        return digest
    if previous is not None and previous.version == document.source_version:
        return f"{document.source_version}+{digest}"
    return document.source_version


def _write_document(
    conn: sqlite3.Connection, document: NewDocument, chunks: Sequence[NewChunk], embedder: str
) -> WriteResult:
    dim = int(chunks[0].embedding.shape[0]) if chunks else 0
    if chunks:
        _check_namespace(conn, document.namespace, embedder, dim)
    previous = _latest(conn, document.namespace, document.document_id)
    same_content = previous is not None and (
        previous.content_hash,
        previous.metadata_hash,
    ) == (document.content_hash, document.metadata_hash)
    if previous is not None and same_content:
        if previous.scopes == document.scopes:
            return WriteResult(WriteOutcome.UNCHANGED, document.document_id, previous.version, 0)
        _replace_scopes_of_all_versions(conn, document)
        return WriteResult(WriteOutcome.SCOPES_UPDATED, document.document_id, previous.version, 0)
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
    else:
        conn.executemany(
            "INSERT INTO document_scopes (scope, doc) VALUES (?, ?)",
            [(scope, doc_rowid) for scope in sorted(document.scopes)],
        )
    for chunk in chunks:
        _insert_chunk(conn, document, doc_rowid, seq, chunk)
    outcome = WriteOutcome.ADDED if previous is None else WriteOutcome.NEW_VERSION
    return WriteResult(outcome, document.document_id, version, len(chunks))


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


def _insert_chunk(
    conn: sqlite3.Connection, d: NewDocument, doc_rowid: int, seq: int, chunk: NewChunk
) -> None:
    if d.text[chunk.start_char : chunk.end_char] != chunk.text:
        raise ValueError(f"chunk {chunk.ordinal} of {d.document_id} does not match its span")
    embedding = np.ascontiguousarray(chunk.embedding, dtype=np.float32)
    cursor = conn.execute(
        """INSERT INTO chunks (chunk_id, namespace, doc, ordinal, start_char, end_char, text,
               heading_path, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            f"{d.document_id}@{seq}#{chunk.ordinal}",
            d.namespace,
            doc_rowid,
            chunk.ordinal,
            chunk.start_char,
            chunk.end_char,
            chunk.text,
            json.dumps(list(chunk.heading_path), ensure_ascii=False),
            embedding.tobytes(),
        ),
    )
    terms = index_terms(" ".join([*chunk.heading_path, d.title or "", chunk.text]))
    conn.execute("INSERT INTO chunk_fts (rowid, terms) VALUES (?, ?)", (cursor.lastrowid, terms))


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


def _delete_chunks(conn: sqlite3.Connection, doc: int) -> None:
    conn.execute(
        "DELETE FROM chunk_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc = ?)", (doc,)
    )
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


def _write_graph(
    conn: sqlite3.Connection,
    namespace: str,
    nodes: Sequence[KnowledgeNode],
    relations: Sequence[Relation],
) -> None:
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
        keys = {name_key(n) for n in (node.name, *node.aliases)} - {""}
        conn.executemany(
            "INSERT OR IGNORE INTO node_names (namespace, key, node_id) VALUES (?, ?, ?)",
            [(namespace, key, node.node_id) for key in sorted(keys)],
        )
        roles = dict(node.support_roles)
        rowids = _chunk_rowids(conn, namespace, node.supporting_chunk_ids)
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


def _chunk_ids(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
    if not rowids:
        return {}
    marks = ", ".join("?" * len(rowids))
    rows = conn.execute(f"SELECT id, chunk_id FROM chunks WHERE id IN ({marks})", list(rowids))
    return dict(rows.fetchall())


def _scopes_of(conn: sqlite3.Connection, docs: set[int]) -> dict[int, frozenset[str]]:
    if not docs:
        return {}
    marks = ", ".join("?" * len(docs))
    found: dict[int, set[str]] = {doc: set() for doc in docs}
    for scope, doc in conn.execute(
        f"SELECT scope, doc FROM document_scopes WHERE doc IN ({marks})", sorted(docs)
    ):
        found[doc].add(scope)
    return {doc: frozenset(scopes) for doc, scopes in found.items()}


def _view(row: tuple[object, ...], scopes: frozenset[str]) -> ChunkView:
    (
        chunk_id,
        document_id,
        version,
        source_uri,
        title,
        text,
        start,
        end,
        ordinal,
        _doc,
        created,
        updated,
        valid_from,
        valid_to,
        is_latest,
        declared,
        _superseded_by_version,
    ) = row
    return ChunkView(
        chunk_id=str(chunk_id),
        document_id=str(document_id),
        document_version=str(version),
        source_uri=str(source_uri),
        title=None if title is None else str(title),
        text=str(text),
        start_char=int(start),  # type: ignore[call-overload]
        end_char=int(end),  # type: ignore[call-overload]
        ordinal=int(ordinal),  # type: ignore[call-overload]
        scopes=scopes,
        dates=DocumentDates(
            _parse(created),  # type: ignore[arg-type]
            _parse(updated),  # type: ignore[arg-type]
            _parse(valid_from),  # type: ignore[arg-type]
            _parse(valid_to),  # type: ignore[arg-type]
        ),
        superseded=not is_latest or declared is not None,
        superseded_by=None if declared is None else str(declared),
    )
