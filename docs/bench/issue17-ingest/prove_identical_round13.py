"""Round 13 proof (round 12's digests, plus the query vectors and calls of 16,000 characters):
what the ingest pipeline stores, and what queries then find, digested.

Run once per code tree (PYTHONPATH=<tree>/src:<tree>/lab) and compare the printed line:

    python docs/bench/issue17-ingest/prove_identical_round13.py [--documents 2000]

Ingests the bench documents (the first ``--documents`` of ``bench_sources``: one or a few
chunks each) plus 150 long documents (8-40 passages joined: many chunks, micro-batches of
several texts, texts past 128 tokens) and a few edge cases (one word, whitespace runs,
repeated text) with ``ingest_sources`` into a fresh embedded store, then digests:

* ``rows``: every chunk row in (document id, ordinal) order: chunk id, document id, version,
  ordinal, span, text, heading path and the embedding's bytes;
* ``embeddings``: the embedding bytes alone, same order;
* ``queries``: top-10 (chunk id, score as float hex) of vector and full-text search for 8
  queries (English and Korean) over every scope;
* ``embedder``: ``embed_documents`` over the same chunk texts in one flat call per 64 texts;
* ``embedder_16k``: ``embed_documents`` over calls of 16,000 characters of chunk text (the
  bench's embedder alone), and ``query_vectors``: ``embed_query`` of the 8 queries.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.ingest import ROOT, SCOPE_COUNT, bench_sources
from graphctx_lab.bench.store import load_passages

QUERIES = (
    "Who directed the film that won the award?",
    "When was the company founded and by whom?",
    "river flowing through the capital city",
    "부당해고 구제신청 기간",
    "근로계약의 해지와 퇴직금",
    "소득세 세율",
    "football club stadium capacity",
    "the zirconium ledger",
)


def sources(data: Path, count: int) -> list[SourceDocument]:
    out = bench_sources(data, count)
    passages, _ = load_passages(data)
    for i in range(150):
        size = 8 + (i * 7) % 33
        picked = [passages[(i * 97 + k * 13) % len(passages)] for k in range(size)]
        text = "\n\n".join(f"## {p.title}\n\n{p.text}" for p in picked)
        meta = DocumentMetadata(
            document_id=f"long-{i}", title=f"long {i}", scopes=(f"s{i % SCOPE_COUNT}",)
        )
        out.append(SourceDocument(f"bench://long/{i}", MediaType.MARKDOWN, text, meta))
    for i, text in enumerate(("word", "a   b\n\n\n   c", "repeat " * 400, "가" * 3000, "x")):
        meta = DocumentMetadata(document_id=f"edge-{i}", title=None, scopes=("s0",))
        out.append(SourceDocument(f"bench://edge/{i}", MediaType.TEXT, text, meta))
    return out


def digest(items: object) -> str:
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8")).hexdigest()


async def run(data: Path, count: int) -> dict[str, object]:
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.open()
    docs = sources(data, count)
    with tempfile.TemporaryDirectory(prefix="prove-identical-") as tmp:
        path = Path(tmp) / "s.sqlite"
        store = SqliteGraphStore(path)
        await store.open()
        try:
            started = time.perf_counter()
            report = await ingest_sources(
                store,
                embedder,
                docs,
                ROOT,
                IngestDefaults(namespace="p", source_uri_prefix="bench://"),
            )
            elapsed = time.perf_counter() - started
            assert not report.errors, report.errors[:3]
            conn = sqlite3.connect(path)
            rows = conn.execute(
                """SELECT c.chunk_id, d.document_id, d.version, c.ordinal, c.start_char,
                          c.end_char, c.text, c.heading_path, c.embedding
                   FROM chunks c JOIN documents d ON d.id = c.doc
                   ORDER BY d.document_id, c.ordinal"""
            ).fetchall()
            conn.close()
            scopes = frozenset(f"s{i}" for i in range(SCOPE_COUNT))
            deadline = time.monotonic() + 600
            hits = []
            query_vectors = [embedder.embed_query(q).tobytes().hex() for q in QUERIES]
            for query in QUERIES:
                vector = embedder.embed_query(query)
                found = await store.vector_search("p", vector, scopes, 10, deadline)
                hits.append([(h.chunk_id, float(h.score).hex()) for h in found])
                found = await store.fulltext_search("p", query, scopes, 10, deadline)
                hits.append([(h.chunk_id, float(h.score).hex()) for h in found])
        finally:
            await store.close()
    texts = [row[6] for row in rows]
    flat = [
        embedder.embed_documents(texts[i : i + 64]).tobytes().hex()
        for i in range(0, len(texts), 64)
    ]
    calls: list[list[str]] = [[]]
    for text in texts:
        if sum(map(len, calls[-1])) >= 16_000:
            calls.append([])
        calls[-1].append(text)
    flat_16k = [embedder.embed_documents(call).tobytes().hex() for call in calls]
    return {
        "shares_passes": getattr(embedder, "_shares_passes", None),
        "documents": len(docs),
        "chunks": len(rows),
        "ingest_s": round(elapsed, 2),
        "rows": digest([list(r[:8]) + [r[8].hex()] for r in rows]),
        "embeddings": digest([r[8].hex() for r in rows]),
        "queries": digest(hits),
        "embedder": digest(flat),
        "embedder_16k": digest(flat_16k),
        "query_vectors": digest(query_vectors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--documents", type=int, default=2000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.data, args.documents))))


if __name__ == "__main__":
    main()
