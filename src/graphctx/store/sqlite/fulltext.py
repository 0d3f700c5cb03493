"""One FTS5 table per namespace: the full-text index of the embedded store.

BM25 weighs a term by how many indexed chunks contain it. With one index shared by every
namespace, the order of a caller's hits moved with other projects' documents, so a writer in
its own project could learn whether any other project contains a word (one bit per request)
and the stage's time grew with other projects' matches. Each namespace therefore gets its own
FTS5 table, created by the first write to the namespace and named ``chunk_fts_<n>`` after its
row in ``fulltext_tables`` (never after the namespace string). Term pruning counts chunks of
the same namespace only.

Within a namespace the score uses the statistics of the caller's visible chunks only
(:mod:`.visible_bm25`). What still counts hidden chunks is the cost guard that drops
over-common query terms (:func:`~graphctx.store.sqlite.fts5_query.prune_common_terms`), which
acts only on terms found in more than 1,000 chunks of the namespace: see
``docs/security.md`` (R4).

A store written before this change has one shared ``chunk_fts`` table; :func:`migrate_shared_index`
splits it into per-namespace tables when the store is opened, in the schema's transaction.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Final

from graphctx.store.sqlite.fts5_query import prune_common_terms
from graphctx.store.sqlite.namespace_stats import NamespaceStats
from graphctx.store.sqlite.visible_bm25 import rank_visible
from graphctx.text.lexical import index_terms_many

__all__ = [
    "FTS_TOKENIZER",
    "chunk_terms",
    "index_chunks",
    "migrate_shared_index",
    "search",
    "table_of",
    "unindex_document",
]

FTS_TOKENIZER: Final = "unicode61 remove_diacritics 2"
_TABLE_NAME: Final = re.compile(r"chunk_fts_[0-9]+")
_SHARED_TABLE: Final = "chunk_fts"

FULLTEXT_TABLES_DDL: Final = """
CREATE TABLE IF NOT EXISTS fulltext_tables (
    id        INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL UNIQUE
)"""


def _name(row_id: int) -> str:
    return f"chunk_fts_{int(row_id)}"


def table_of(conn: sqlite3.Connection, namespace: str) -> str | None:
    """The FTS5 table of ``namespace``, or None before its first chunk was indexed."""
    row = conn.execute(
        "SELECT id FROM fulltext_tables WHERE namespace = ?", (namespace,)
    ).fetchone()
    if row is None:
        return None
    name = _name(row[0])
    assert _TABLE_NAME.fullmatch(name)
    return name


def _create_table(conn: sqlite3.Connection, namespace: str) -> str:
    cursor = conn.execute("INSERT INTO fulltext_tables (namespace) VALUES (?)", (namespace,))
    assert cursor.lastrowid is not None
    name = _name(cursor.lastrowid)
    conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5 (terms, tokenize = '{FTS_TOKENIZER}')")
    conn.execute(f"CREATE VIRTUAL TABLE {name}_vocab USING fts5vocab ({name}, 'row')")
    return name


def index_chunks(
    conn: sqlite3.Connection, namespace: str, rowids: Sequence[int], texts: Sequence[str]
) -> None:
    """Index chunks' analysed text (``texts[i]`` is chunk row ``rowids[i]``'s) in their
    namespace's table (created on first use), in one statement."""
    name = table_of(conn, namespace) or _create_table(conn, namespace)
    conn.executemany(
        f"INSERT INTO {name} (rowid, terms) VALUES (?, ?)",
        zip(rowids, index_terms_many(texts), strict=True),
    )


def unindex_document(conn: sqlite3.Connection, namespace: str, doc: int) -> None:
    """Remove the chunks of one document version from the index."""
    name = table_of(conn, namespace)
    if name is not None:
        conn.execute(
            f"DELETE FROM {name} WHERE rowid IN (SELECT id FROM chunks WHERE doc = ?)", (doc,)
        )


def chunk_terms(conn: sqlite3.Connection) -> dict[int, str]:
    """The indexed terms of every chunk of every namespace, by chunk row id."""
    terms: dict[int, str] = {}
    for (row_id,) in conn.execute("SELECT id FROM fulltext_tables ORDER BY id").fetchall():
        terms.update(conn.execute(f"SELECT rowid, terms FROM {_name(row_id)}").fetchall())
    return terms


def search(
    conn: sqlite3.Connection,
    stats: NamespaceStats,
    namespace: str,
    terms: list[str],
    scopes: frozenset[str],
    limit: int,
) -> list[tuple[str, float]]:
    """``(chunk_id, score)`` of the best visible chunks, by BM25 over visible statistics
    (:mod:`.visible_bm25`); common terms are pruned by the namespace's counts (R4). The
    counts come from ``stats`` (the namespace at ``conn``'s generation)."""
    name = table_of(conn, namespace)
    if name is None:
        return []
    frequency = stats.document_frequency(conn, name, terms)
    kept = prune_common_terms(terms, frequency, stats.total)
    if not kept:
        return []
    visible = stats.visible(scopes)
    return rank_visible(conn, name, kept, stats.rows, scopes, visible, limit)


def migrate_shared_index(conn: sqlite3.Connection) -> None:
    """Split a store's shared ``chunk_fts`` table into per-namespace tables, then drop it.

    Runs inside the schema's write transaction: a failure leaves the old table as it was.
    The terms are copied as indexed, so every chunk stays findable by the same words.
    """
    conn.execute(FULLTEXT_TABLES_DDL)
    shared = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = ? AND type = 'table'", (_SHARED_TABLE,)
    ).fetchone()
    if shared is None:
        return
    namespaces = [
        ns for (ns,) in conn.execute("SELECT DISTINCT namespace FROM chunks ORDER BY namespace")
    ]
    for namespace in namespaces:
        name = table_of(conn, namespace) or _create_table(conn, namespace)
        conn.execute(
            f"""INSERT INTO {name} (rowid, terms)
                SELECT f.rowid, f.terms FROM {_SHARED_TABLE} f JOIN chunks c ON c.id = f.rowid
                WHERE c.namespace = ?""",
            (namespace,),
        )
    conn.execute(f"DROP TABLE IF EXISTS {_SHARED_TABLE}_vocab")
    conn.execute(f"DROP TABLE {_SHARED_TABLE}")
