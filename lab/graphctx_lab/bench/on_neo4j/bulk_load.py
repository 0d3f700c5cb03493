"""Loading a size step: a sample one document per transaction, the rest in batches, both
through the GraphStore port.

The first ``PORT_SAMPLE`` documents of each size step go through ``GraphStore.write_document``,
one transaction per document, as a caller writing documents one by one does. The rest of each
step goes through ``GraphStore.write_documents``, ``BULK_BATCH`` documents per transaction (as
``graphctx ingest`` batches them), so both rates measure the store's own write path and the
graph carries everything it keeps (scope sets, full-text statistics).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import neo4j

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import InvalidDocumentError
from graphctx.store.neo4j import Neo4jGraphStore, queries
from graphctx.store.records import DocumentWrite, NewChunk, Vector
from graphctx_lab.bench.on_neo4j.corpus import (
    BENCH_NAMESPACE,
    BenchDocument,
    document_vector,
    new_document,
)

__all__ = ["BULK_BATCH", "PORT_SAMPLE", "bulk_write", "ingest_step", "scalar_count"]

PORT_SAMPLE = 500  # documents per size step written one per transaction
BULK_BATCH = 500  # documents per write_documents transaction


def scalar_count(driver: neo4j.Driver, database: str, query: str, **params: object) -> int:
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
    """The first ``PORT_SAMPLE`` documents one per transaction, the rest in ``BULK_BATCH``
    batches, both through the store port; returns both rates."""
    embedder_name = UniversalSentenceEncoderEmbedder().name
    sample, rest = docs[:PORT_SAMPLE], docs[PORT_SAMPLE:]
    started = time.perf_counter()
    for doc in sample:
        chunk = NewChunk(0, 0, len(doc.text), doc.text, document_vector(doc, vectors))
        await store.write_document(new_document(doc), [chunk], embedder_name)
    port_s = time.perf_counter() - started
    started = time.perf_counter()
    for at in range(0, len(rest), BULK_BATCH):
        await bulk_write(store, rest[at : at + BULK_BATCH], vectors)
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


async def bulk_write(
    store: Neo4jGraphStore, docs: Sequence[BenchDocument], vectors: list[Vector]
) -> None:
    """One ``write_documents`` transaction; a refused document stops the bench."""
    embedder_name = UniversalSentenceEncoderEmbedder().name
    writes = [
        DocumentWrite(
            new_document(doc),
            (NewChunk(0, 0, len(doc.text), doc.text, document_vector(doc, vectors)),),
        )
        for doc in docs
    ]
    results = await store.write_documents(BENCH_NAMESPACE, writes, embedder_name)
    refused = [r for r in results if isinstance(r, InvalidDocumentError)]
    if refused:
        raise refused[0]
