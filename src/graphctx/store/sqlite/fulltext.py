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

Beside each chunk's FTS row the same write records its length (``chunk_term_counts``, the
BM25 length of its stored terms) and, when it has any, its irregular terms in the
namespace's second FTS5 table ``chunk_fts_<n>_irregular`` and its repeated regular terms in
the third, ``chunk_fts_<n>_repeated`` (:mod:`.term_shapes`): together they let
:mod:`.visible_bm25` know every candidate's length, which candidates truly hold a query term
and which hold it only once, without reading the candidates. A store written before them
gets them filled on open (:func:`index_term_shapes`), in the schema's transaction.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from typing import Final

from graphctx.store.sqlite.fts5_query import prune_common_terms
from graphctx.store.sqlite.namespace_stats import NamespaceStats
from graphctx.store.sqlite.term_shapes import irregular_terms, repeated_terms, term_count
from graphctx.store.sqlite.visible_bm25 import irregular_table, rank_visible, repeated_table
from graphctx.text.lexical import index_terms_many

__all__ = [
    "FTS_TOKENIZER",
    "chunk_term_shapes",
    "chunk_terms",
    "index_chunks",
    "index_term_shapes",
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
    _create_shape_tables(conn, name)
    return name


def _create_shape_tables(conn: sqlite3.Connection, name: str) -> None:
    for table in (irregular_table(name), repeated_table(name)):
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table}"
            f" USING fts5 (terms, tokenize = '{FTS_TOKENIZER}')"
        )


def _insert_term_shapes(
    conn: sqlite3.Connection, name: str, rowids: Sequence[int], stored: Sequence[str]
) -> None:
    """Each chunk's length, and its irregular and its repeated terms (only chunks that have
    some)."""
    conn.executemany(
        "INSERT OR REPLACE INTO chunk_term_counts (id, terms) VALUES (?, ?)",
        zip(rowids, map(term_count, stored), strict=True),
    )
    _insert_shape(conn, irregular_table(name), rowids, stored, irregular_terms)
    _insert_shape(conn, repeated_table(name), rowids, stored, repeated_terms)


def _insert_shape(
    conn: sqlite3.Connection,
    table: str,
    rowids: Sequence[int],
    stored: Sequence[str],
    shape: Callable[[str], str],
) -> None:
    found = [
        (rowid, terms) for rowid, terms in zip(rowids, map(shape, stored), strict=True) if terms
    ]
    conn.executemany(f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)", found)


def index_chunks(
    conn: sqlite3.Connection, namespace: str, rowids: Sequence[int], texts: Sequence[str]
) -> None:
    """Index chunks' analysed text (``texts[i]`` is chunk row ``rowids[i]``'s) in their
    namespace's table (created on first use), in one statement."""
    name = table_of(conn, namespace) or _create_table(conn, namespace)
    stored = index_terms_many(texts)
    conn.executemany(
        f"INSERT INTO {name} (rowid, terms) VALUES (?, ?)", zip(rowids, stored, strict=True)
    )
    _insert_term_shapes(conn, name, rowids, stored)


def unindex_document(conn: sqlite3.Connection, namespace: str, doc: int) -> None:
    """Remove the chunks of one document version from the index (the three tables and the
    lengths)."""
    name = table_of(conn, namespace)
    if name is not None:
        for table in (name, irregular_table(name), repeated_table(name)):
            conn.execute(
                f"DELETE FROM {table} WHERE rowid IN (SELECT id FROM chunks WHERE doc = ?)",
                (doc,),
            )
    conn.execute(
        "DELETE FROM chunk_term_counts WHERE id IN (SELECT id FROM chunks WHERE doc = ?)", (doc,)
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
    return rank_visible(conn, name, kept, stats.rows, stats.lengths, scopes, visible, limit)


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


def index_term_shapes(conn: sqlite3.Connection, *, repeated_only: bool = False) -> None:
    """Record every indexed chunk's length, irregular and repeated terms, from its stored
    terms (a store written before they were recorded at write time); ``repeated_only``: the
    repeated terms alone (a store that records the others).

    Runs inside the schema's write transaction: a failure leaves nothing. It rewrites them
    from scratch, so running it again gives the same rows.
    """
    for (row_id,) in conn.execute("SELECT id FROM fulltext_tables ORDER BY id").fetchall():
        name = _name(row_id)
        _create_shape_tables(conn, name)
        rewritten = (
            [repeated_table(name)]
            if repeated_only
            else [irregular_table(name), repeated_table(name)]
        )
        for table in rewritten:
            conn.execute(f"DELETE FROM {table}")
        rows = conn.execute(f"SELECT rowid, terms FROM {name}").fetchall()
        rowids, stored = [r for r, _ in rows], [str(t) for _, t in rows]
        if repeated_only:
            _insert_shape(conn, repeated_table(name), rowids, stored, repeated_terms)
        else:
            _insert_term_shapes(conn, name, rowids, stored)


def chunk_term_shapes(
    conn: sqlite3.Connection,
) -> dict[int, tuple[int | None, str | None, str | None]]:
    """Every chunk's recorded BM25 length, its irregular and its repeated stored terms (None
    where the chunk has no such row), by chunk row id: what the lazy ranking reads besides
    the terms."""
    lengths = dict(conn.execute("SELECT id, terms FROM chunk_term_counts").fetchall())
    irregular: dict[int, str] = {}
    repeated: dict[int, str] = {}
    for (row_id,) in conn.execute("SELECT id FROM fulltext_tables ORDER BY id").fetchall():
        name = _name(row_id)
        irregular.update(conn.execute(f"SELECT rowid, terms FROM {irregular_table(name)}"))
        repeated.update(conn.execute(f"SELECT rowid, terms FROM {repeated_table(name)}"))
    return {
        rowid: (lengths.get(rowid), irregular.get(rowid), repeated.get(rowid))
        for rowid in lengths.keys() | irregular.keys() | repeated.keys()
    }
