"""The chunk rows of one write transaction, inserted after all of its documents.

A batch writes each document inside its own savepoint, so that one a rule refuses leaves
nothing. FTS5 writes its pending terms out as a new index segment at savepoint boundaries, so
indexing each document inside its savepoint left one segment per document, and FTS5 merged
them again while the batch ran: at ~1 chunk per document, releasing those savepoints and the
commit took about half of the store's write time (docs/bench/ingest-sqlite-store.md). Chunks
therefore wait here while the documents' version rows are written, and go into the chunk
table and the full-text table in one statement each after the last document, in the same
transaction: an error there rolls back the whole batch, and a refused document's chunks are
dropped with its savepoint (:meth:`PendingChunks.rewind`). The index text of all of them is
analysed in one call.

Row ids are handed out as SQLite would one insert at a time (the largest plus one, document
after document), so readers' vector caches only append and the rows are those one-by-one
writes leave.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from graphctx.store.records import NewChunk, NewDocument, check_chunk_span, fulltext_source
from graphctx.store.sqlite.fulltext import index_chunks

__all__ = ["PendingChunks"]

_INSERT_CHUNK = """INSERT INTO chunks (id, chunk_id, namespace, doc, ordinal, start_char,
    end_char, text, heading_path, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""

ChunkRow = tuple[int, str, str, int, int, int, int, str, str, bytes]


class PendingChunks:
    """Chunk rows of one namespace waiting for :meth:`insert`, with their index text."""

    def __init__(self, conn: sqlite3.Connection, namespace: str) -> None:
        (last,) = conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()
        self._first_rowid = int(last) + 1
        self._namespace = namespace
        self._rows: list[ChunkRow] = []
        self._texts: list[str] = []  # what the full-text index analyses, per row

    def add(
        self, d: NewDocument, doc_rowid: int, seq: int, chunks: Sequence[NewChunk]
    ) -> tuple[str, ...]:
        """Queue a version's chunks (each must match its span of the text); their ids."""
        if d.namespace != self._namespace:
            raise ValueError(f"{d.document_id} is not in namespace {self._namespace!r}")
        for chunk in chunks:
            check_chunk_span(d, chunk)
        chunk_ids = tuple(f"{d.document_id}@{seq}#{chunk.ordinal}" for chunk in chunks)
        rowid = self._first_rowid + len(self._rows)
        for i, (chunk_id, chunk) in enumerate(zip(chunk_ids, chunks, strict=True)):
            self._rows.append(
                (
                    rowid + i,
                    chunk_id,
                    d.namespace,
                    doc_rowid,
                    chunk.ordinal,
                    chunk.start_char,
                    chunk.end_char,
                    chunk.text,
                    json.dumps(list(chunk.heading_path), ensure_ascii=False),
                    np.ascontiguousarray(chunk.embedding, dtype=np.float32).tobytes(),
                )
            )
            self._texts.append(fulltext_source(d, chunk))
        return chunk_ids

    def mark(self) -> int:
        """Where the queue stands: :meth:`rewind` drops what was queued after it."""
        return len(self._rows)

    def rewind(self, mark: int) -> None:
        del self._rows[mark:]
        del self._texts[mark:]

    def insert(self, conn: sqlite3.Connection) -> None:
        """Insert and index every queued chunk, once, after the transaction's last document
        (outside any savepoint: see the module)."""
        if not self._rows:
            return
        conn.executemany(_INSERT_CHUNK, self._rows)
        index_chunks(conn, self._namespace, [row[0] for row in self._rows], self._texts)
