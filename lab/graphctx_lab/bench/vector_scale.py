"""``graphctx bench vectors``: the vector stage alone at up to 1M chunks, exact scan vs ANN.

Writing a 1M-chunk store through the port is CPU-bound in the analyser (full-text terms of
every chunk) and takes hours on a shared two-core machine, so this bench measures the one
stage the scale question is about without SQLite: the same vectors the store bench writes
(:mod:`.store_corpus`: real passages, then distractor pairs), in the same scope groups
(:class:`~graphctx.store.sqlite.vector_groups.NamespaceMatrix`, one block per scope, rows in
id order), the same query embeddings and 1-3-scope callers as ``graphctx bench store``.

- exact: :func:`~graphctx.store.sqlite.vector_scan.top_k_visible`, the store's scan;
- ANN: :class:`~graphctx.store.sqlite.ann.AnnVectors` with its default settings (but for
  every visible set, however small, going to the index), built from
  the matrix (timed), candidates searched under the callers' visible rows and re-scored
  exactly from the matrix. The store re-scores from SQLite instead (one ``IN`` read of 100
  rows: ``graphctx bench store --ann`` measures that path at 10k and 100k).

Recall@10 and @50 of the ANN's rows against the exact scan's, on the same queries.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.sqlite.ann import AnnSettings, AnnVectors
from graphctx.store.sqlite.vector_groups import (
    NamespaceMatrix,
    ScopeGroup,
    group_index,
    max_norm_of,
)
from graphctx.store.sqlite.vector_scan import exact_scores, top_k_visible
from graphctx_lab.bench.store import (
    BENCH_NAMESPACE,
    CORPUS_NOTE,
    SCOPE_COUNT,
    SEED,
    WARM_UP,
    default_data_dir,
    load_passages,
    percentiles,
    query_plan,
)
from graphctx_lab.bench.store_ann import current_rss_mb
from graphctx_lab.bench.store_corpus import corpus_plan

__all__ = ["run_vector_bench"]

F32 = npt.NDArray[np.float32]
LIMITS = (10, 50)


def _matrix(size: int, vectors: F32) -> NamespaceMatrix:
    """The store bench's ``size`` chunks as the store would hold them (row ids 1..size)."""
    plan = list(corpus_plan(vectors.shape[0], size, SCOPE_COUNT))
    scopes = np.asarray([scope for _, scope in plan], dtype=np.int16)
    first = np.asarray([parts[0] for parts, _ in plan], dtype=np.int64)
    second = np.asarray([parts[-1] for parts, _ in plan], dtype=np.int64)
    dim = vectors.shape[1]
    matrix = np.empty((size, dim), dtype=np.float32)
    for start in range(0, size, 65_536):  # a pair's vector: the normalised sum (pair_vector)
        end = min(size, start + 65_536)
        a, b = first[start:end], second[start:end]
        pair = vectors[a] + vectors[b]
        pair /= np.linalg.norm(pair, axis=1, keepdims=True)
        matrix[start:end] = np.where((a == b)[:, None], vectors[a], pair)
    groups: dict[frozenset[str], ScopeGroup] = {}
    for s in range(SCOPE_COUNT):
        at = np.flatnonzero(scopes == s)
        block = np.ascontiguousarray(matrix[at])
        key = frozenset({f"s{s}"})
        groups[key] = ScopeGroup(key, (at + 1).astype(np.int64), block, block, max_norm_of(block))
    del matrix
    return NamespaceMatrix(1, 0, dim, size, groups, group_index(groups))


def _ann_top_k(
    ann: AnnVectors, data: NamespaceMatrix, q: F32, scopes: frozenset[str], limit: int
) -> list[int]:
    """The store's ANN search, re-scored from the matrix instead of SQLite."""
    found = ann.candidates(None, BENCH_NAMESPACE, data, q, scopes, limit)
    assert found is not None
    groups = data.visible_groups(scopes)
    rows = np.empty((found.shape[0], data.dim), dtype=np.float32)
    for n, rowid in enumerate(found.tolist()):
        for g in groups:
            at = int(np.searchsorted(g.rowids, rowid))
            if at < g.size and g.rowids[at] == rowid:
                rows[n] = g.matrix[at]
                break
    scores = exact_scores(rows, q)
    return [int(found[i]) for i in np.lexsort((found, -scores))[:limit]]


def _bench_size(
    size: int,
    vectors: F32,
    queries: list[tuple[F32, frozenset[str]]],
) -> dict[str, object]:
    started = time.perf_counter()
    data = _matrix(size, vectors)
    matrix_s = time.perf_counter() - started
    rss_matrix = current_rss_mb()
    ann = AnnVectors(AnnSettings(min_visible_rows=1))  # the index answers every search
    report = ann.build(BENCH_NAMESPACE, data)
    rss_index = current_rss_mb()
    exact_ms: list[float] = []
    ann_ms: list[float] = []
    found = dict.fromkeys(LIMITS, 0)
    wanted = dict.fromkeys(LIMITS, 0)
    visible: list[int] = []
    for n, (q, scopes) in enumerate(queries):
        for limit in LIMITS:
            t0 = time.perf_counter()
            truth = [rowid for rowid, _ in top_k_visible(data, q, scopes, limit)]
            t1 = time.perf_counter()
            approx = _ann_top_k(ann, data, q, scopes, limit)
            t2 = time.perf_counter()
            if n < WARM_UP:
                continue
            if limit == max(LIMITS):
                exact_ms.append((t1 - t0) * 1000)
                ann_ms.append((t2 - t1) * 1000)
                visible.append(sum(g.size for g in data.visible_groups(scopes)))
            found[limit] += len(set(truth) & set(approx))
            wanted[limit] += len(truth)
    return {
        "chunks": size,
        "dim": data.dim,
        "queries": len(exact_ms),
        "visible_rows": {"p50": statistics.median(visible), "max": max(visible)},
        "matrix_build_s": round(matrix_s, 1),
        "rss_mb_with_matrix": rss_matrix,
        "exact_top50_ms": percentiles(exact_ms),
        "ann": {
            "lists": report.lists,
            "nprobe": ann.settings.nprobe,
            "oversample": ann.settings.oversample,
            "build_s": round(report.seconds, 1),
            "index_mb": round(report.index_bytes / 2**20, 1),
            "rss_mb_with_matrix_and_index": rss_index,
            "top50_ms": percentiles(ann_ms),
            "recall": {f"@{k}": round(found[k] / max(1, wanted[k]), 4) for k in LIMITS},
        },
    }


def run_vector_bench(out: Path, *, sizes: list[int], queries: int, data: Path | None = None) -> int:
    from graphctx_lab.bench.on_neo4j.corpus import cache_dir, cached_vectors

    passages, questions = load_passages(data or default_data_dir())
    embedder = UniversalSentenceEncoderEmbedder()
    vectors, _ = cached_vectors(embedder, passages, cache_dir())
    results: dict[str, object] = {"embedder": embedder.name, "corpus": CORPUS_NOTE, "sizes": []}
    for size in sizes:
        plan = query_plan(questions, queries, random.Random(SEED + size))
        asked = [
            (np.asarray(embedder.embed_query(q), dtype=np.float32), frozenset(s)) for q, s in plan
        ]
        entry = _bench_size(size, np.vstack(vectors).astype(np.float32), asked)
        results["sizes"].append(entry)  # type: ignore[attr-defined]
        print(json.dumps(entry, indent=2), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    target = out / "vectors.json"
    target.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")
    return 0
