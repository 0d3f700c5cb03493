"""The candidate statement alone, an older tree's text against this one's, alternated (issue 17).

On a graph that ``graphctx bench neo4j`` left on a server (``NEO4J_*``; namespace
``bench-neo4j``), each of the bench's questions (the same seeded sample and principals as
``on_neo4j.measure``) is asked with every scope and with its 1-3 scopes, as
``CANDIDATE_SEARCH`` with the parameters ``Neo4jGraphStore`` sends. In each round the two
texts take turns question by question (which goes first alternating), so a change in the
machine's load meets both alike; the ratio of their p50s is taken within each round. What
the store keeps of each row is compared (:func:`kept`: Python's hits and scores, the
statistics, the vector hits and the views of the hits kept): a difference fails the run.
The rows past Python's hits in ``lexical_top`` (a margin) are not results: a text whose
MaxScore bound is tighter leaves out those that cannot reach the top.

    python -m graphctx_lab.bench.neo4j_candidate_pairs --baseline /tmp/old/src --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import neo4j
import numpy as np

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.neo4j import Neo4jGraphStore, acl, candidate_queries, parse_location
from graphctx.text.lexical import query_terms
from graphctx_lab.bench.on_neo4j.corpus import (
    BENCH_NAMESPACE,
    SEED,
    build_corpus,
    load_questions,
)
from graphctx_lab.bench.on_neo4j.measure import WARMUP
from graphctx_lab.bench.store import SCOPE_COUNT, default_data_dir, load_passages

__all__ = ["run_pairs"]

LIMIT = 50  # the retrieval pipeline's candidate limit (retrieve.candidates)
EVERY_SCOPE = [f"s{i}" for i in range(SCOPE_COUNT)]


def baseline_statement(src: Path) -> str:
    """The older tree's CANDIDATE_SEARCH text, read by a process that imports that tree."""
    code = "from graphctx.store.neo4j.candidate_queries import CANDIDATE_SEARCH as s; print(s)"
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout[:-1]


def plan(data: Path, size: int, count: int) -> list[tuple[str, list[str]]]:
    """The bench's questions and principals at ``size`` (``on_neo4j.measure``), warm-up
    questions included."""
    passages, _ = load_passages(data)
    docs = build_corpus(passages, size)[:size]
    scope_of = {d.key: d.scope for d in docs}
    eligible = [q for q in load_questions(data) if q.gold <= scope_of.keys()]
    rng = random.Random(SEED)
    chosen = rng.sample(eligible, min(len(eligible), count + WARMUP))
    principals = [rng.sample(EVERY_SCOPE, rng.randint(1, 3)) for _ in chosen]
    return [(q.text, scopes) for q, scopes in zip(chosen, principals, strict=True)]


def statement_parameters(
    store: Neo4jGraphStore, query: str, vector: list[float], scopes: list[str]
) -> dict[str, Any]:
    granted = frozenset(scopes)
    lucene = acl.lucene_query(BENCH_NAMESPACE, query, granted)
    terms = [] if lucene is None else query_terms(query)
    return store._candidate_parameters(BENCH_NAMESPACE, lucene, terms, vector, granted, LIMIT)


STATISTICS = (
    "dimension",
    "any_visible_set",
    "visible",
    "pool_size",
    "total_length",
    "holding",
    "unmigrated",
    "vector_hits",
)


def kept(row: dict[str, Any]) -> dict[str, Any]:
    """What ``Neo4jGraphStore`` keeps of a candidate row: the full-text hits and scores
    Python ranks from it, the statistics, the vector hits and the views of those hits."""
    hits = [(h.chunk_id, h.score) for h in Neo4jGraphStore._lexical_hits(row, LIMIT)]
    wanted = {chunk_id for chunk_id, _ in hits} | {str(h["chunk_id"]) for h in row["vector_hits"]}
    views = sorted(
        (v for v in row["views"] if str(v["chunk_id"]) in wanted),
        key=lambda v: str(v["chunk_id"]),
    )
    return {"hits": hits, **{key: row[key] for key in STATISTICS}, "views": views}


def _timed(driver: neo4j.Driver, database: str, text: str, parameters: dict[str, Any]) -> Any:
    started = time.perf_counter()
    records, _, _ = driver.execute_query(
        text, parameters, database_=database, routing_=neo4j.RoutingControl.READ
    )
    return (time.perf_counter() - started) * 1000, [kept(r.data()) for r in records]


def run_pairs(baseline: Path, size: int, count: int, rounds: int) -> dict[str, Any]:
    where = parse_location(os.environ["NEO4J_URI"], os.environ)
    texts = {
        "baseline": baseline_statement(baseline),
        "current": candidate_queries.CANDIDATE_SEARCH,
    }
    asked = plan(default_data_dir(), size, count)
    embedder = UniversalSentenceEncoderEmbedder()
    vectors = [
        np.asarray(embedder.embed_query(q), dtype=np.float32).astype(np.float64).tolist()
        for q, _ in asked
    ]
    store = Neo4jGraphStore(where.uri, where.auth, where.database)
    cases = {
        "all scopes": [
            statement_parameters(store, q, v, EVERY_SCOPE)
            for (q, _), v in zip(asked, vectors, strict=True)
        ],
        "1-3 scopes": [
            statement_parameters(store, q, v, s) for (q, s), v in zip(asked, vectors, strict=True)
        ],
    }
    driver = neo4j.GraphDatabase.driver(
        where.uri, auth=where.auth, notifications_min_severity="OFF"
    )
    passes: list[dict[str, Any]] = []
    differences = 0
    try:
        for text in texts.values():  # plan both texts before timing
            for parameters in cases["all scopes"][:WARMUP] + cases["1-3 scopes"][:WARMUP]:
                _timed(driver, where.database, text, parameters)
        for n in range(rounds):
            got: dict[str, dict[str, list[float]]] = {name: {} for name in texts}
            rows: dict[str, dict[str, list[Any]]] = {name: {} for name in texts}
            for case, all_parameters in cases.items():
                for name in texts:
                    got[name][case], rows[name][case] = [], []
                for q, parameters in enumerate(all_parameters):
                    order = ["baseline", "current"] if (n + q) % 2 == 0 else ["current", "baseline"]
                    for name in order:
                        ms, answer = _timed(driver, where.database, texts[name], parameters)
                        rows[name][case].append(answer)
                        if q >= WARMUP:
                            got[name][case].append(ms)
            for case in cases:
                differences += sum(
                    a != b
                    for a, b in zip(rows["baseline"][case], rows["current"][case], strict=True)
                )
            entry: dict[str, Any] = {"round": n}
            for case in cases:
                base_p50 = statistics.median(got["baseline"][case])
                new_p50 = statistics.median(got["current"][case])
                entry[case] = {
                    "baseline_p50_ms": round(base_p50, 2),
                    "current_p50_ms": round(new_p50, 2),
                    "ratio": round(new_p50 / base_p50, 3),
                }
            passes.append(entry)
            print(json.dumps(entry), file=sys.stderr, flush=True)
    finally:
        driver.close()
    summary = {
        case: {
            "ratio_min": min(p[case]["ratio"] for p in passes),
            "ratio_median": round(statistics.median(p[case]["ratio"] for p in passes), 3),
            "ratio_max": max(p[case]["ratio"] for p in passes),
            "baseline_p50_ms_median": statistics.median(p[case]["baseline_p50_ms"] for p in passes),
            "current_p50_ms_median": statistics.median(p[case]["current_p50_ms"] for p in passes),
        }
        for case in cases
    }
    return {
        "questions": len(asked) - WARMUP,
        "rounds": rounds,
        "baseline_src": str(baseline),
        "rows_compared": rounds * sum(len(c) for c in cases.values()),
        "rows_different": differences,
        "load_average": list(os.getloadavg()),
        "summary": summary,
        "passes": passes,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="an older tree's src/")
    parser.add_argument("--size", type=int, default=10_000, help="the graph's chunk count")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the JSON result here")
    args = parser.parse_args(argv)
    report = run_pairs(args.baseline, args.size, args.queries, args.rounds)
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    if report["rows_different"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
