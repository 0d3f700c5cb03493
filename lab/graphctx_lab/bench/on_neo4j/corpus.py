"""The Neo4j comparison's data: 2WikiMultihopQA questions, the passages padded with distractors.

Each corpus passage is one document with one chunk, its document id the corpus id. The other
corpora's passages pad each size as distractors: first each passage once, then pairs of them
(text concatenated, vector the normalised sum of the two USE vectors).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import ConfigurationError
from graphctx.store.records import DocumentDates, NewDocument, Vector
from graphctx_lab.bench.store import SCOPE_COUNT, Passage, embed_unique

__all__ = [
    "BENCH_NAMESPACE",
    "DATASET",
    "SEED",
    "BenchDocument",
    "Question",
    "build_corpus",
    "cache_dir",
    "cached_vectors",
    "document_vector",
    "load_questions",
    "new_document",
]

BENCH_NAMESPACE = "bench-neo4j"
DATASET = "2wikimultihopqa"
GOLD_PREFIX = "2wiki-"  # corpus ids of the dataset
SEED = 20261130


@dataclass(frozen=True)
class Question:
    text: str
    gold: frozenset[str]  # supporting passage ids = document ids


@dataclass(frozen=True)
class BenchDocument:
    key: str  # document id
    title: str
    text: str
    scope: str
    parts: tuple[int, ...]  # indexes into the embedded passages; two for a distractor pair


def load_questions(data: Path) -> list[Question]:
    path = data / "multihop" / DATASET / "questions.jsonl"
    if not path.exists():
        raise ConfigurationError(f"{path} not found: set GRAPHCTX_DATA or --data")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Question(row["question"], frozenset(row["supporting_ids"])) for row in rows]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphctx" / "bench"


def cached_vectors(
    embedder: UniversalSentenceEncoderEmbedder, passages: list[Passage], cache: Path
) -> tuple[list[Vector], float]:
    """The USE vector of every unique passage, embedded once and kept between runs."""
    digest = hashlib.sha256(embedder.name.encode())
    for p in passages:
        digest.update(p.text.encode("utf-8") + b"\0")
    stem = cache / f"use-{digest.hexdigest()[:16]}"
    matrix_path, meta_path = stem.with_suffix(".npy"), stem.with_suffix(".json")
    if matrix_path.exists() and meta_path.exists():
        matrix = np.load(matrix_path)
        rate = float(json.loads(meta_path.read_text("utf-8"))["embed_chunks_per_s"])
        return [matrix[i] for i in range(matrix.shape[0])], rate
    vectors, rate = embed_unique(embedder, passages)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(matrix_path, np.vstack(vectors))
    meta_path.write_text(json.dumps({"embed_chunks_per_s": rate}), encoding="utf-8")
    return vectors, rate


def build_corpus(passages: list[Passage], size: int) -> list[BenchDocument]:
    """2Wiki passages once each, then distractors: other passages once, then pairs."""
    rng = random.Random(SEED)
    gold = [i for i, p in enumerate(passages) if p.key.startswith(GOLD_PREFIX)]
    pool = [i for i, p in enumerate(passages) if not p.key.startswith(GOLD_PREFIX)]
    docs: list[BenchDocument] = []

    def add(key: str, parts: tuple[int, ...]) -> None:
        title = " / ".join(passages[i].title for i in parts)
        text = "\n\n".join(passages[i].text for i in parts)
        docs.append(BenchDocument(key, title, text, f"s{rng.randrange(SCOPE_COUNT)}", parts))

    for i in gold:
        add(passages[i].key, (i,))
    for i in pool:
        add(f"distractor-{len(docs)}", (i,))
    seen: set[tuple[int, int]] = set()
    while len(docs) < size:
        a, b = rng.sample(pool, 2)
        if (a, b) not in seen:
            seen.add((a, b))
            add(f"distractor-{len(docs)}", (a, b))
    return docs[:size]


def document_vector(doc: BenchDocument, vectors: list[Vector]) -> Vector:
    if len(doc.parts) == 1:
        return vectors[doc.parts[0]]
    total = np.sum([np.asarray(vectors[i], dtype=np.float32) for i in doc.parts], axis=0)
    unit: Vector = np.asarray(total / np.linalg.norm(total), dtype=np.float32)
    return unit


def new_document(doc: BenchDocument) -> NewDocument:
    digest = hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    return NewDocument(
        namespace=BENCH_NAMESPACE,
        document_id=doc.key,
        source_uri=f"bench://{doc.key}",
        scopes=frozenset({doc.scope}),
        source_version="1",
        title=doc.title,
        media_type="record",
        text=doc.text,
        dates=DocumentDates(),
        declared_superseded_by=None,
        content_hash=digest,
        metadata_hash=digest,
    )
