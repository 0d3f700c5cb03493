"""Schema and connection settings of the embedded store (one SQLite file, WAL mode)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphctx.errors import StoreCorruptError, StoreUnavailableError
from graphctx.store.sqlite.fulltext import index_term_shapes, migrate_shared_index
from graphctx.text.lexical import ANALYSER

# 2: one full-text table per namespace (store/sqlite/fulltext.py); a version-1 file is
# migrated on open.
# 3: each chunk's length (chunk_term_counts) and irregular terms (chunk_fts_<n>_irregular)
# recorded at write time; an older file gets them filled on open.
# 4: each chunk's repeated regular terms (chunk_fts_<n>_repeated) too; filled likewise.
SCHEMA_VERSION = 4
_MIGRATED_VERSIONS = frozenset({1, 2, 3})
APPLICATION_ID = 0x67637478  # "gctx": marks the file as a graphctx store
BUSY_TIMEOUT_MS = 10_000

_DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS namespaces (
    namespace       TEXT PRIMARY KEY,
    embedder        TEXT NOT NULL,
    dimension       INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    id                     INTEGER PRIMARY KEY,
    namespace              TEXT NOT NULL REFERENCES namespaces(namespace),
    document_id            TEXT NOT NULL,
    version                TEXT NOT NULL,
    version_seq            INTEGER NOT NULL,
    content_hash           TEXT NOT NULL,
    metadata_hash          TEXT NOT NULL,
    source_uri             TEXT NOT NULL,
    title                  TEXT,
    media_type             TEXT NOT NULL,
    text                   TEXT NOT NULL,
    created_at             TEXT,
    updated_at             TEXT,
    valid_from             TEXT,
    valid_to               TEXT,
    declared_superseded_by TEXT,
    superseded_by_version  INTEGER,
    ingested_at            TEXT NOT NULL,
    extra_json             TEXT NOT NULL,
    is_latest              INTEGER NOT NULL,
    UNIQUE (namespace, document_id, version_seq)
);
CREATE INDEX IF NOT EXISTS documents_by_id ON documents (namespace, document_id, is_latest);
CREATE TABLE IF NOT EXISTS document_scopes (
    scope TEXT NOT NULL,
    doc   INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    PRIMARY KEY (scope, doc)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS document_scopes_by_doc ON document_scopes (doc);
CREATE TABLE IF NOT EXISTS chunks (
    id           INTEGER PRIMARY KEY,
    chunk_id     TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    doc          INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,
    start_char   INTEGER NOT NULL,
    end_char     INTEGER NOT NULL,
    text         TEXT NOT NULL,
    heading_path TEXT NOT NULL,
    embedding    BLOB NOT NULL,
    UNIQUE (namespace, chunk_id)
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc);
CREATE TABLE IF NOT EXISTS chunk_term_counts (
    id    INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    terms INTEGER NOT NULL
);
DROP INDEX IF EXISTS chunks_by_namespace;
CREATE INDEX IF NOT EXISTS chunks_layout ON chunks (namespace, id, doc);
CREATE TABLE IF NOT EXISTS nodes (
    namespace   TEXT NOT NULL,
    node_id     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT,
    PRIMARY KEY (namespace, node_id)
);
CREATE TABLE IF NOT EXISTS node_support (
    namespace TEXT NOT NULL,
    node_id   TEXT NOT NULL,
    chunk     INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    PRIMARY KEY (namespace, node_id, chunk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS node_support_by_chunk ON node_support (chunk);
CREATE TABLE IF NOT EXISTS relations (
    id            INTEGER PRIMARY KEY,
    namespace     TEXT NOT NULL,
    source_id     TEXT NOT NULL,
    target_id     TEXT NOT NULL,
    relation_type TEXT NOT NULL,
    UNIQUE (namespace, source_id, relation_type, target_id)
);
CREATE TABLE IF NOT EXISTS relation_support (
    relation INTEGER NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
    chunk    INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    PRIMARY KEY (relation, chunk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relation_support_by_chunk ON relation_support (chunk);
CREATE INDEX IF NOT EXISTS relations_by_target_covering
    ON relations (namespace, target_id, relation_type, source_id);
CREATE TABLE IF NOT EXISTS node_names (
    namespace TEXT NOT NULL,
    key       TEXT NOT NULL,
    node_id   TEXT NOT NULL,
    PRIMARY KEY (namespace, key, node_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS node_declarations (
    namespace   TEXT NOT NULL,
    node_id     TEXT NOT NULL,
    attribute   TEXT NOT NULL,
    value       TEXT NOT NULL,
    declaration TEXT NOT NULL,
    PRIMARY KEY (namespace, node_id, attribute, value, declaration)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS declaration_support (
    namespace   TEXT NOT NULL,
    declaration TEXT NOT NULL,
    chunk       INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    home        INTEGER NOT NULL,
    PRIMARY KEY (namespace, declaration, chunk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS declaration_support_by_chunk ON declaration_support (chunk);
CREATE TABLE IF NOT EXISTS chunk_deletes (
    layout     INTEGER PRIMARY KEY,
    reuse_from INTEGER NOT NULL
);
"""

# Columns added by the graph layer; an older file gets them on open (ADD COLUMN only).
_ADDED_COLUMNS = (
    ("nodes", "node_type", "TEXT"),
    ("node_support", "link", "TEXT NOT NULL DEFAULT 'SUPPORTS'"),
    ("node_support", "role", "TEXT"),
)


# A file written before declarations were recorded gets one per node, introducing all its keys
# and its type through all its support: the conservative reading (a hidden supporting chunk
# then hides them, as it hides the node's name).
_LEGACY_DECLARATIONS = """
INSERT OR IGNORE INTO node_declarations (namespace, node_id, attribute, value, declaration)
SELECT namespace, node_id, 'key', key, 'legacy:' || node_id FROM node_names
UNION ALL
SELECT namespace, node_id, 'type', node_type, 'legacy:' || node_id FROM nodes
WHERE node_type IS NOT NULL;
INSERT OR IGNORE INTO declaration_support (namespace, declaration, chunk, home)
SELECT namespace, 'legacy:' || node_id, chunk, max(link <> 'MENTIONS') FROM node_support
GROUP BY namespace, node_id, chunk
"""


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    for table, column, declaration in _ADDED_COLUMNS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring an older file up to SCHEMA_VERSION inside the open transaction."""
    (version,) = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    migrate_shared_index(conn)
    if int(version) in _MIGRATED_VERSIONS:
        if int(version) < 4:
            index_term_shapes(conn, repeated_only=int(version) == 3)
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
        )


def _keep_read_only(
    action: int, arg1: str | None, arg2: str | None, _database: str | None, _trigger: str | None
) -> int:
    """Authorizer of read connections: deny the two ways around ``PRAGMA query_only``.

    ``query_only`` alone is advisory: the same connection may set it back to OFF and then
    write, or ATTACH a second database. Refusing to change the pragma (reading it stays
    allowed) and refusing ATTACH/DETACH keeps every write on a read connection refused.
    """
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() == "query_only" and arg2:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """Open a connection with the store's settings; read connections refuse writes."""
    try:
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
        if read_only:
            conn.execute("PRAGMA query_only = ON")
            conn.set_authorizer(_keep_read_only)
    except sqlite3.OperationalError as exc:
        raise StoreUnavailableError(f"cannot open store {path}: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        raise StoreCorruptError(f"{path} is not a readable SQLite database: {exc}") from exc
    return conn


def initialise(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema in a new file, or check that an existing file is a graphctx store."""
    try:
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
    except sqlite3.DatabaseError as exc:
        raise StoreCorruptError(f"{path} is not a readable SQLite database: {exc}") from exc
    if has_tables and application_id != APPLICATION_ID:
        raise StoreCorruptError(f"{path} is an SQLite file but not a graphctx store")
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN IMMEDIATE")
        legacy = has_tables and "node_declarations" not in _tables(conn)
        for statement in _DDL.split(";"):
            if statement.strip():
                conn.execute(statement)
        _add_missing_columns(conn)
        if legacy:
            for statement in _LEGACY_DECLARATIONS.split(";"):
                conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
        _migrate(conn)
        if not has_tables:  # a new file: each of its stored terms is written by this analyser
            conn.execute("INSERT INTO meta (key, value) VALUES ('analyser', ?)", (ANALYSER,))
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', '0')")
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('layout', '0')")
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise StoreUnavailableError(f"cannot initialise store {path}: {exc}") from exc
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    if int(version) != SCHEMA_VERSION:
        raise StoreCorruptError(
            f"{path} has schema version {version}; this graphctx expects {SCHEMA_VERSION}"
        )
