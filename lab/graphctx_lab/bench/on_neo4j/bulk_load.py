"""Loading a size step: a sample through the GraphStore port (the measured rate), the rest in bulk.

The first ``PORT_SAMPLE`` documents of each size step go through ``GraphStore.write_document``,
one transaction per document, as graphctx ingest does. The rest of each step is bulk-loaded,
``BULK_BATCH`` documents per transaction, with the write path's own row builders
(``writes.document_properties`` and ``writes.chunk_row``), so the graph layout is the same.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import neo4j

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.neo4j import Neo4jGraphStore, queries, writes
from graphctx.store.neo4j.acl import scope_set_key
from graphctx.store.records import NewChunk, Vector
from graphctx_lab.bench.on_neo4j.corpus import (
    BENCH_NAMESPACE,
    BenchDocument,
    document_vector,
    new_document,
)

__all__ = ["BULK_BATCH", "PORT_SAMPLE", "bulk_write", "ingest_step", "scalar_count"]

PORT_SAMPLE = 500  # documents per size step written through the GraphStore port
BULK_BATCH = 500  # documents per bulk-load transaction

# Bulk load: the layout of ``queries.CREATE_VERSIONS`` + ``CREATE_CHUNKS`` for new documents.
BULK_RESERVE_SEQ = """
MATCH (n:Namespace {name: $namespace})
WITH n, n.chunk_seq AS base
SET n.chunk_seq = base + $count
RETURN base
"""
BULK_CREATE = """
UNWIND $rows AS row
CREATE (d:Document)
SET d = row.document
CREATE (c:Chunk)
SET c = row.chunk
CREATE (d)-[:HAS_CHUNK]->(c)
"""


def scalar_count(driver: neo4j.Driver, database: str, query: str, **params: Any) -> int:
    records, _, _ = driver.execute_query(query, params, database_=database)
    return int(records[0]["n"])


async def ingest_step(
    store: Neo4jGraphStore,
    docs: Sequence[BenchDocument],
    vectors: list[Vector],
    embed_rate: float,
    driver: neo4j.Driver,
    database: str,
) -> dict[str, float]:
    """The first ``PORT_SAMPLE`` documents go through the GraphStore port, one transaction per
    document, as ingest does (that is the measured ingest rate); the rest are bulk-loaded."""
    embedder_name = UniversalSentenceEncoderEmbedder().name
    sample, rest = docs[:PORT_SAMPLE], docs[PORT_SAMPLE:]
    started = time.perf_counter()
    for doc in sample:
        chunk = NewChunk(0, 0, len(doc.text), doc.text, document_vector(doc, vectors))
        await store.write_document(new_document(doc), [chunk], embedder_name)
    port_s = time.perf_counter() - started
    started = time.perf_counter()
    for at in range(0, len(rest), BULK_BATCH):
        bulk_write(driver, database, rest[at : at + BULK_BATCH], vectors)
        if (at // BULK_BATCH) % 20 == 19:
            print(f"  bulk-loaded {at + BULK_BATCH}/{len(rest)}", flush=True)
    bulk_s = time.perf_counter() - started
    started = time.perf_counter()
    driver.execute_query(queries.AWAIT_INDEXES, {"timeout_s": 900}, database_=database)
    await_s = time.perf_counter() - started
    port_rate = len(sample) / port_s if sample else 0.0
    return {
        "port_chunks": len(sample),
        "port_write_chunks_per_s": round(port_rate, 1),
        "ingest_chunks_per_s_derived": round(1 / (1 / embed_rate + 1 / port_rate), 1)
        if port_rate
        else 0.0,
        "bulk_chunks": len(rest),
        "bulk_chunks_per_s": round(len(rest) / bulk_s, 1) if rest else 0.0,
        "index_catch_up_s": round(await_s, 2),
    }


def bulk_write(
    driver: neo4j.Driver, database: str, docs: Sequence[BenchDocument], vectors: list[Vector]
) -> None:
    """Documents in graphctx's layout (the write path's own row builders), one transaction."""

    def work(tx: neo4j.ManagedTransaction) -> None:
        record = tx.run(BULK_RESERVE_SEQ, namespace=BENCH_NAMESPACE, count=len(docs)).single()
        assert record is not None, "the port sample created the namespace"
        base = int(record["base"])
        rows, deltas = [], Counter[str]()
        for n, doc in enumerate(docs):
            document = new_document(doc)
            chunk = NewChunk(0, 0, len(doc.text), doc.text, document_vector(doc, vectors))
            version = writes.version_label(document, None)
            rows.append(
                {
                    "document": writes.document_properties(document, version, 1),
                    "chunk": writes.chunk_row(document, 1, chunk, base + n + 1),
                }
            )
            deltas[scope_set_key(BENCH_NAMESPACE, document.scopes)] += 1
        tx.run(BULK_CREATE, rows=rows).consume()
        scopes = {scope_set_key(BENCH_NAMESPACE, [d.scope]): [d.scope] for d in docs}
        delta_rows = [
            {"key": key, "chunks": count, "scopes": scopes[key]}
            for key, count in sorted(deltas.items())
        ]
        tx.run(queries.ADJUST_SCOPE_SETS, namespace=BENCH_NAMESPACE, deltas=delta_rows).consume()

    with driver.session(database=database) as session:
        session.execute_write(work)
