"""The documents of ``graphctx bench store`` at any size, and the store files built from them.

What is real and what is synthetic:

- the first ``len(passages)`` documents (~9.5k) are the shared corpora's real passages, each
  once, with its real USE vector (every unique passage embedded once, cached between runs);
- every later document is a **synthetic distractor**: two different real passages, drawn at
  random, text concatenated (``"\\n\\n"``) and vector the normalised sum of the two passages'
  USE vectors (not an embedding of the concatenated text: embedding ~1M texts on two shared
  cores would take hours). The same scheme pads the Neo4j comparison
  (:mod:`graphctx_lab.bench.on_neo4j.corpus`). No pair repeats, so no two documents share a
  vector and an approximate index's recall against exact search is well defined.

Each document has one chunk and one scope out of ``SCOPE_COUNT``, drawn at random. The draws
depend only on ``CORPUS_SEED``: a smaller size's corpus is a prefix of a larger one's.

A store is written through the port's batched ``write_documents`` (``WRITE_BATCH`` documents
per transaction). With ``--store-dir`` the file is kept under that folder, named by a digest
of everything that decides its content, and reused by later runs: a 1M-chunk build takes tens
of minutes on the shared two-core machine. Its build figures are kept beside it, and a build
that was interrupted resumes from the chunks it committed (the write rate is then the
resumed part's).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphctx.store.records import DocumentDates, DocumentWrite, NewChunk, NewDocument, Vector
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.progress import Progress

__all__ = [
    "CORPUS_SCHEME",
    "BuiltStore",
    "bench_documents",
    "build_store",
    "corpus_digest",
    "corpus_plan",
    "pair_vector",
]

CORPUS_SCHEME = "passages-then-pairs-v1"  # change when the generator below changes
CORPUS_SEED = 20261201
WRITE_BATCH = 1_000


@dataclass(frozen=True)
class BuiltStore:
    path: Path
    chunks: int
    write_chunks_per_s: float
    build_s: float
    reused: bool


def _bench_document(
    namespace: str, key: str, title: str, text: str, scope: str, vector: Vector
) -> DocumentWrite:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    document = NewDocument(
        namespace=namespace,
        document_id=key,
        source_uri=f"bench://{key}",
        scopes=frozenset({scope}),
        source_version="1",
        title=title,
        media_type="record",
        text=text,
        dates=DocumentDates(),
        declared_superseded_by=None,
        content_hash=digest,
        metadata_hash=digest,
    )
    return DocumentWrite(document, (NewChunk(0, 0, len(text), text, vector),), None)


def corpus_plan(
    passages: int, size: int, scope_count: int
) -> Iterator[tuple[tuple[int, ...], int]]:
    """(indexes of the passages it is made of, scope number) of each of ``size`` documents:
    every passage once, then distinct ordered pairs."""
    rng = random.Random(CORPUS_SEED)
    for i in range(min(size, passages)):
        yield (i,), rng.randrange(scope_count)
    seen: set[tuple[int, int]] = set()
    made = passages
    while made < size:
        a, b = rng.sample(range(passages), 2)
        if (a, b) in seen:
            continue
        seen.add((a, b))
        yield (a, b), rng.randrange(scope_count)
        made += 1


def pair_vector(a: Vector, b: Vector) -> Vector:
    total = np.asarray(a, dtype=np.float32) + np.asarray(b, dtype=np.float32)
    unit: Vector = np.asarray(total / np.linalg.norm(total), dtype=np.float32)
    return unit


def bench_documents(
    namespace: str,
    passages: list[tuple[str, str, str]],
    vectors: list[Vector],
    size: int,
    scope_count: int,
) -> Iterator[DocumentWrite]:
    """``size`` documents: (key, title, text) passages once each, then distinct pairs."""
    for i, (parts, scope) in enumerate(corpus_plan(len(passages), size, scope_count)):
        if len(parts) == 1:
            key, title, text = passages[i]
            yield _bench_document(namespace, f"{key}-{i}", title, text, f"s{scope}", vectors[i])
            continue
        a, b = parts
        title = f"{passages[a][1]} / {passages[b][1]}"
        text = f"{passages[a][2]}\n\n{passages[b][2]}"
        vector = pair_vector(vectors[a], vectors[b])
        yield _bench_document(namespace, f"pair-{i}", title, text, f"s{scope}", vector)


def corpus_digest(embedder: str, passages: list[tuple[str, str, str]], size: int) -> str:
    digest = hashlib.sha256(f"{CORPUS_SCHEME}\0{CORPUS_SEED}\0{embedder}\0{size}\0".encode())
    for key, title, text in passages:
        digest.update(f"{key}\0{title}\0{text}\0".encode())
    return digest.hexdigest()[:16]


async def build_store(
    path: Path, documents: Iterator[DocumentWrite], size: int, namespace: str, embedder: str
) -> BuiltStore:
    """Write ``documents`` into a new store at ``path``, or reuse the one a run left there."""
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        figures = json.loads(meta.read_text("utf-8"))
        if figures.get("complete") and figures.get("chunks") == size:
            return BuiltStore(
                path, size, float(figures["write_chunks_per_s"]), float(figures["build_s"]), True
            )
    done = _chunks_written(path, namespace)  # an interrupted build resumes where it stopped
    if done == 0:
        for leftover in (
            path,
            path.with_name(f"{path.name}-wal"),
            path.with_name(f"{path.name}-shm"),
        ):
            leftover.unlink(missing_ok=True)
    documents = itertools.islice(documents, done, None)
    store = SqliteGraphStore(path)
    await store.open()
    progress = Progress(f"bench store {size:,}", interval_s=30)
    written = done
    writing_s = 0.0
    started = time.perf_counter()
    try:
        batch: list[DocumentWrite] = []
        for write in documents:
            batch.append(write)
            if len(batch) == WRITE_BATCH:
                writing_s += await _write_batch(store, namespace, batch, embedder)
                written += len(batch)
                batch = []
                progress.update(f"{written:,}/{size:,} chunks written", final=False)
        if batch:
            writing_s += await _write_batch(store, namespace, batch, embedder)
            written += len(batch)
    finally:
        await store.close()
    progress.update(f"{written:,}/{size:,} chunks written", final=True)
    build_s = time.perf_counter() - started
    rate = (written - done) / writing_s if writing_s else 0.0
    meta.write_text(
        json.dumps(
            {
                "complete": True,
                "chunks": written,
                "resumed_at": done,
                "write_chunks_per_s": round(rate, 1),
                "build_s": round(build_s, 1),
            }
        ),
        encoding="utf-8",
    )
    return BuiltStore(path, written, rate, build_s, False)


def _chunks_written(path: Path, namespace: str) -> int:
    """Chunks an earlier, interrupted build committed (whole batches: one transaction each)."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (count,) = conn.execute(
            "SELECT count(*) FROM chunks WHERE namespace = ?", (namespace,)
        ).fetchone()
    except sqlite3.Error:
        return 0
    finally:
        conn.close()
    return int(count)


async def _write_batch(
    store: SqliteGraphStore, namespace: str, batch: list[DocumentWrite], embedder: str
) -> float:
    """Seconds spent in the store's batched write (building the records is not timed)."""
    started = time.perf_counter()
    results = await store.write_documents(namespace, batch, embedder)
    elapsed = time.perf_counter() - started
    refused = [r for r in results if isinstance(r, Exception)]
    if refused:
        raise refused[0]
    return elapsed
