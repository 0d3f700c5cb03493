"""A canonical, read-only snapshot of an embedded store, to compare two stores' content.

Crash tests need "the same state as an uninterrupted run" as a checkable fact. This module
reads every table in one read transaction (one consistent snapshot) over a ``mode=ro``
connection, and renders each row with natural keys in place of row ids:

* a document version is ``(namespace, document_id, version_seq)``; its *content* is the
  document row, its chunks in ordinal order (id, span, text, heading path, embedding), the
  full-text terms indexed for each chunk with its recorded length and irregular terms (what
  the lazy ranking reads), and its graph support rows;
* a document's *state* is which version is latest, which version superseded which, and the
  scopes of every version;
* the graph is nodes, name keys, node support and relations with their supporting chunks,
  all by ``chunk_id``; namespaces are (name, embedder, dimension).

Excluded, because two correct runs legitimately differ there:

* row ids (``documents.id``, ``chunks.id``, ``relations.id``, the FTS ``rowid``): assigned in
  write order, which a resumed run changes; every reference to them is replaced by its
  natural key (``superseded_by_version`` becomes the successor's ``version_seq``);
* ``documents.ingested_at``: the wall-clock time of the write;
* ``meta.generation`` and ``meta.layout``: counts of committed writes (all, and those that
  delete or re-scope chunks), cache keys for readers that a resumed run advances differently;
* the low bits of embeddings: vectors are compared rounded to ``EMBEDDING_DECIMALS``, so a
  BLAS summation order that differs between processes cannot fail a comparison;
* the FTS vocabulary tables: derived by FTS5 from the indexed terms, which are compared;
  the per-namespace tables' names (``fulltext_tables`` row ids, assigned in write order).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from graphctx.store.sqlite.fulltext import chunk_term_shapes, chunk_terms

__all__ = [
    "EMBEDDING_DECIMALS",
    "StoreSnapshot",
    "VersionContent",
    "VersionKey",
    "integrity_problems",
    "read_snapshot",
]

EMBEDDING_DECIMALS = 5


class VersionKey(NamedTuple):
    namespace: str
    document_id: str
    seq: int


@dataclass(frozen=True)
class VersionContent:
    """Everything written with one document version, and its digest."""

    label: str  # the version label retrieval reports (``document_version``)
    text: str
    chunks: tuple[tuple[str, int, int], ...]  # (chunk_id, start_char, end_char) by ordinal
    sha256: str  # the document row, chunks, embeddings and full-text rows
    graph_sha256: str | None  # the graph support its chunks give (None: no support at all)


@dataclass(frozen=True)
class StoreSnapshot:
    versions: Mapping[VersionKey, VersionContent]
    document_states: Mapping[tuple[str, str], str]  # (namespace, document_id) -> canonical JSON
    graph_sha256: str
    namespaces_sha256: str

    @property
    def sha256(self) -> str:
        """One digest over everything compared (see the module docstring for exclusions)."""
        parts = [f"{k}={v.sha256}/{v.graph_sha256}" for k, v in sorted(self.versions.items())]
        parts += [f"{k}={v}" for k, v in sorted(self.document_states.items())]
        parts += [self.graph_sha256, self.namespaces_sha256]
        return _sha("\n".join(parts))

    def differences(self, expected: StoreSnapshot, limit: int = 5) -> list[str]:
        """Human-readable differences from ``expected``, at most ``limit`` of them."""
        found: list[str] = []
        for key in sorted(set(self.versions) | set(expected.versions)):
            mine, theirs = self.versions.get(key), expected.versions.get(key)
            if mine != theirs:
                found.append(f"version {key}: {_state(mine)} != expected {_state(theirs)}")
        for doc in sorted(set(self.document_states) | set(expected.document_states)):
            if self.document_states.get(doc) != expected.document_states.get(doc):
                found.append(
                    f"document {doc}: {self.document_states.get(doc)}"
                    f" != expected {expected.document_states.get(doc)}"
                )
        if self.graph_sha256 != expected.graph_sha256:
            found.append("graph rows differ")
        if self.namespaces_sha256 != expected.namespaces_sha256:
            found.append("namespaces differ")
        return found[:limit]


def _state(content: VersionContent | None) -> str:
    if content is None:
        return "absent"
    graph = "no graph" if content.graph_sha256 is None else content.graph_sha256[:10]
    return f"{content.label} ({content.sha256[:10]}, {graph})"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(rows: Iterable[Iterable[object]]) -> str:
    return json.dumps([list(row) for row in rows], ensure_ascii=False, separators=(",", ":"))


def _connect_read_only(path: Path) -> sqlite3.Connection:
    if not path.exists():
        raise FileNotFoundError(path)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    conn.execute("PRAGMA query_only = ON")
    return conn


def integrity_problems(path: Path) -> list[str]:
    """What ``PRAGMA integrity_check`` and ``foreign_key_check`` report (empty when sound)."""
    conn = _connect_read_only(path)
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
        problems += [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
        return problems
    finally:
        conn.close()


def read_snapshot(path: Path) -> StoreSnapshot:
    """Read the store at ``path`` in one read transaction; the file is never written."""
    conn = _connect_read_only(path)
    try:
        conn.execute("BEGIN")
        snapshot = StoreSnapshot(
            _versions(conn),
            _document_states(conn),
            _graph_sha(conn),
            _sha(_canonical(conn.execute("SELECT * FROM namespaces ORDER BY namespace"))),
        )
        conn.execute("COMMIT")
        return snapshot
    finally:
        conn.close()


_DOCUMENT_CONTENT = """
    SELECT id, namespace, document_id, version_seq, version, content_hash, metadata_hash,
           source_uri, title, media_type, text, created_at, updated_at, valid_from, valid_to,
           declared_superseded_by, extra_json
    FROM documents ORDER BY namespace, document_id, version_seq
"""

_CHUNKS = """
    SELECT c.doc, c.chunk_id, c.ordinal, c.start_char, c.end_char, c.text, c.heading_path,
           c.embedding, c.id
    FROM chunks c
    ORDER BY c.doc, c.ordinal
"""

_SUPPORT = """
    SELECT c.doc, s.node_id, s.link, s.role, c.chunk_id FROM node_support s
    JOIN chunks c ON c.id = s.chunk ORDER BY c.doc, s.node_id, c.chunk_id
"""


def _embedding(blob: bytes) -> list[float]:
    vector = np.frombuffer(blob, dtype=np.float32).astype(np.float64)
    rounded: list[float] = np.round(vector, EMBEDDING_DECIMALS).tolist()
    return rounded


def _versions(conn: sqlite3.Connection) -> dict[VersionKey, VersionContent]:
    chunks: dict[int, list[tuple[object, ...]]] = {}
    indexed, shapes = chunk_terms(conn), chunk_term_shapes(conn)
    for doc, cid, ordinal, start, end, text, heading, blob, rowid in conn.execute(_CHUNKS):
        terms = (indexed.get(rowid), *shapes.get(rowid, (None, None, None)))
        row = (cid, ordinal, start, end, text, heading, _embedding(blob), terms)
        chunks.setdefault(doc, []).append(row)
    support: dict[int, list[tuple[object, ...]]] = {}
    for doc, *row in conn.execute(_SUPPORT):
        support.setdefault(doc, []).append(tuple(row))
    versions: dict[VersionKey, VersionContent] = {}
    for doc, namespace, document_id, seq, label, *rest in conn.execute(_DOCUMENT_CONTENT):
        mine = chunks.get(doc, [])
        body = _canonical([[namespace, document_id, seq, label, *rest], *mine])
        graph = support.get(doc)
        text = str(rest[5])  # content_hash, metadata_hash, source_uri, title, media_type, text
        spans = tuple((str(c[0]), int(str(c[2])), int(str(c[3]))) for c in mine)
        versions[VersionKey(namespace, document_id, seq)] = VersionContent(
            str(label), text, spans, _sha(body), None if graph is None else _sha(_canonical(graph))
        )
    return versions


def _document_states(conn: sqlite3.Connection) -> dict[tuple[str, str], str]:
    rows = conn.execute(
        """SELECT d.namespace, d.document_id, d.version_seq, d.is_latest, s.version_seq,
                  (SELECT json_group_array(scope) FROM (SELECT scope FROM document_scopes
                   WHERE doc = d.id ORDER BY scope))
           FROM documents d LEFT JOIN documents s ON s.id = d.superseded_by_version
           ORDER BY d.namespace, d.document_id, d.version_seq"""
    )
    states: dict[tuple[str, str], list[list[object]]] = {}
    for namespace, document_id, seq, is_latest, successor, scopes in rows:
        states.setdefault((namespace, document_id), []).append(
            [seq, is_latest, successor, json.loads(scopes)]
        )
    return {key: _canonical(value) for key, value in states.items()}


def _graph_sha(conn: sqlite3.Connection) -> str:
    parts = [
        conn.execute(
            "SELECT namespace, node_id, kind, name, description, node_type FROM nodes"
            " ORDER BY namespace, node_id"
        ),
        conn.execute("SELECT namespace, key, node_id FROM node_names ORDER BY 1, 2, 3"),
        conn.execute(
            """SELECT d.namespace, d.node_id, d.attribute, d.value, d.declaration, c.chunk_id,
                      s.home
               FROM node_declarations d LEFT JOIN declaration_support s
                 ON s.namespace = d.namespace AND s.declaration = d.declaration
               LEFT JOIN chunks c ON c.id = s.chunk ORDER BY 1, 2, 3, 4, 5, 6"""
        ),
        conn.execute(
            """SELECT r.namespace, r.source_id, r.relation_type, r.target_id, c.chunk_id
               FROM relations r LEFT JOIN relation_support rs ON rs.relation = r.id
               LEFT JOIN chunks c ON c.id = rs.chunk ORDER BY 1, 2, 3, 4, 5"""
        ),
    ]
    return _sha("\n".join(_canonical(rows) for rows in parts))
