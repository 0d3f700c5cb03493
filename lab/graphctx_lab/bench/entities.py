"""Entity lookup micro-benchmark: ontology augmentation at 100k entities (target p50 < 5 ms).

Builds an embedded store with ``entities`` Entity nodes (half System, half Service), each
supported by one of ``DOCUMENTS`` chunks spread over ``SCOPE_COUNT`` scopes, and one
DEPENDS_ON relation per entity. Then it times what the router does per request: build the
query's lookup keys and look them up among the entities the principal can see (with their
visible relation counts). Questions name a known entity 80% of the time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from graphctx.contract import NodeKind
from graphctx.retrieve.entities import query_keys
from graphctx.store.records import (
    DocumentDates,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    Relation,
)
from graphctx.store.sqlite.store import SqliteGraphStore

__all__ = ["bench_entity_lookup", "run_entity_bench"]

DOCUMENTS = 1_000
SCOPE_COUNT = 10
DIM = 16
NAMESPACE = "bench-entities"
SEED = 20261129
LOOKUP_LIMIT = 20


def _document(i: int) -> tuple[NewDocument, NewChunk]:
    text = f"Service catalogue page {i}: systems and services of hub {i % 37}."
    digest = hashlib.sha256(text.encode()).hexdigest()
    document = NewDocument(
        namespace=NAMESPACE,
        document_id=f"catalogue-{i}",
        source_uri=f"bench://catalogue/{i}",
        scopes=frozenset({f"s{i % SCOPE_COUNT}"}),
        source_version="1",
        title=None,
        media_type="text",
        text=text,
        dates=DocumentDates(),
        declared_superseded_by=None,
        content_hash=digest,
        metadata_hash=digest,
    )
    vector = np.random.default_rng(i).standard_normal(DIM).astype(np.float32)
    return document, NewChunk(0, 0, len(text), text, vector / np.linalg.norm(vector))


def _name(i: int) -> str:
    return f"{'system' if i % 2 else 'service'}-{i:06d}"


async def bench_entity_lookup(entities: int = 100_000, queries: int = 500) -> dict[str, object]:
    """Build the store, then time ``queries`` lookups; returns percentiles in ms."""
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="graphctx-bench-entities-") as tmp:
        store = SqliteGraphStore(Path(tmp) / "entities.sqlite")
        await store.open()
        try:
            started = time.perf_counter()
            chunk_ids = []
            for i in range(DOCUMENTS):
                document, chunk = _document(i)
                await store.write_document(document, [chunk], "bench")
                (view,) = await store.document_chunks(NAMESPACE, document.document_id)
                chunk_ids.append(view.chunk_id)
            nodes = [
                KnowledgeNode(
                    f"e:{i}",
                    NodeKind.ENTITY,
                    _name(i),
                    (chunk_ids[i % DOCUMENTS],),
                    node_type="System" if i % 2 else "Service",
                    aliases=(f"hub{i % 37}-{i}",),
                )
                for i in range(entities)
            ]
            relations = [
                Relation(
                    f"e:{i}",
                    f"e:{(i * 7919 + 1) % entities}",
                    "DEPENDS_ON",
                    (chunk_ids[i % DOCUMENTS],),
                )
                for i in range(entities)
            ]
            await store.write_graph(NAMESPACE, nodes, relations)
            build_s = time.perf_counter() - started
            lookups: list[float] = []
            with_keys: list[float] = []
            hits = 0
            for n in range(queries + 20):
                target = rng.randrange(entities) if rng.random() < 0.8 else entities + n
                question = f"What is connected to {_name(target)} in production?"
                scopes = frozenset(
                    rng.sample([f"s{s}" for s in range(SCOPE_COUNT)], rng.randint(1, 3))
                )
                t0 = time.perf_counter()
                keys = query_keys(question)
                t1 = time.perf_counter()
                found = await store.lookup_entities(
                    NAMESPACE, keys, scopes, LOOKUP_LIMIT, time.monotonic() + 10
                )
                t2 = time.perf_counter()
                if n < 20:  # warm-up
                    continue
                hits += bool(found)
                lookups.append((t2 - t1) * 1000)
                with_keys.append((t2 - t0) * 1000)
        finally:
            await store.close()
    return {
        "entities": entities,
        "relations": entities,
        "documents": DOCUMENTS,
        "scopes": SCOPE_COUNT,
        "queries": queries,
        "queries_with_a_visible_match": hits,
        "build_s": round(build_s, 1),
        "lookup_ms": _percentiles(lookups),
        "keys_and_lookup_ms": _percentiles(with_keys),
        "target_p50_ms": 5.0,
    }


def _percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(cuts[49], 3), "p95": round(cuts[94], 3), "max": round(max(values), 3)}


def run_entity_bench(out: Path, *, entities: int = 100_000, queries: int = 500) -> int:
    """``graphctx bench entities``: write ``entity_lookup.json`` under ``out``."""
    result = asyncio.run(bench_entity_lookup(entities, queries))
    out.mkdir(parents=True, exist_ok=True)
    target = out / "entity_lookup.json"
    target.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    print(f"wrote {target}")
    return 0
