"""Whole retrievals of two trees on one Neo4j server, alternated question by question (issue 17).

On a graph that ``graphctx bench neo4j`` left on a server (``NEO4J_*``; namespace
``bench-neo4j``), each tree (``--baseline`` and ``--current``, each a ``src/`` folder) runs
in a worker process of its own with its own ``ContextProvider``, asked through
``on_neo4j.measure.graphctx_ask`` exactly as the bench asks (hybrid, 8,000 tokens). The
bench's questions (its seeded sample and principals, warm-up questions timed but not counted)
are asked with every scope and with the question's 1-3 scopes; neo4j-graphrag's
HybridRetriever (query embedding plus ``search()``, as the bench times it) answers each
question too. Per question the systems take turns in a rotating order, so a change in the
machine's load meets them alike; each worker times its own ``aretrieve`` (the pipe between
processes is outside the timing). Per round: each system's p50 and the graphctx /
HybridRetriever p50 ratios. What a caller sees of every response
(:func:`~graphctx_lab.bench.neo4j_request_parts.seen`) is compared between the two trees: a
difference fails the run.

    python -m graphctx_lab.bench.neo4j_request_pairs --baseline /tmp/base/src \\
        --current src --rounds 3 --out pairs.json
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import neo4j

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.neo4j import parse_location
from graphctx_lab.bench.neo4j_candidate_pairs import EVERY_SCOPE, plan
from graphctx_lab.bench.on_neo4j.corpus import Question
from graphctx_lab.bench.on_neo4j.graphrag import graphrag_systems, import_graphrag
from graphctx_lab.bench.on_neo4j.measure import WARMUP
from graphctx_lab.bench.on_neo4j.systems import HYBRID
from graphctx_lab.bench.store import default_data_dir

__all__ = ["run_pairs"]

CASES = ("all scopes", "1-3 scopes")
LAB = Path(__file__).resolve().parents[2]


async def _serve(commands: IO[str], answers: IO[str]) -> None:
    """Worker: answer ``[question, scopes]`` lines with ``[ms, digest of what was seen]``."""
    from graphctx.context import default_token_counter
    from graphctx.provider import ContextProvider
    from graphctx.retrieve.authorize import CallerAssertedGrants
    from graphctx.store.neo4j import Neo4jGraphStore
    from graphctx_lab.bench.neo4j_request_parts import seen
    from graphctx_lab.bench.on_neo4j.measure import graphctx_ask

    where = parse_location(os.environ["NEO4J_URI"], os.environ)
    store = Neo4jGraphStore(where.uri, where.auth, where.database)
    await store.open()
    provider = ContextProvider(
        store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants()
    )
    try:
        print(json.dumps("ready"), file=answers, flush=True)
        for line in commands:
            text, scopes = json.loads(line)
            started = time.perf_counter()
            response = await graphctx_ask(provider, Question(text, frozenset()), scopes)
            ms = (time.perf_counter() - started) * 1000
            digest = hashlib.sha256(
                json.dumps(seen(response), sort_keys=True).encode("utf-8")
            ).hexdigest()
            print(json.dumps([ms, digest]), file=answers, flush=True)
    finally:
        await store.close()


class _Worker:
    def __init__(self, src: Path) -> None:
        env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{LAB}"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "graphctx_lab.bench.neo4j_request_pairs", "--worker"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._in, self._out = self.process.stdin, self.process.stdout
        if json.loads(self._out.readline()) != "ready":
            raise RuntimeError(f"worker for {src} did not start")

    def ask(self, text: str, scopes: list[str]) -> tuple[float, str]:
        print(json.dumps([text, scopes]), file=self._in, flush=True)
        ms, digest = json.loads(self._out.readline())
        return float(ms), str(digest)

    def close(self) -> None:
        self._in.close()
        self.process.wait(timeout=60)


def run_pairs(baseline: Path, current: Path, size: int, count: int, rounds: int) -> dict[str, Any]:
    where = parse_location(os.environ["NEO4J_URI"], os.environ)
    asked = plan(default_data_dir(), size, count)
    driver = neo4j.GraphDatabase.driver(where.uri, auth=where.auth)
    hybrid = graphrag_systems(
        import_graphrag(), driver, where.database, UniversalSentenceEncoderEmbedder()
    )[HYBRID]
    workers = {"baseline": _Worker(baseline), "current": _Worker(current)}
    systems = [(tree, case) for case in CASES for tree in workers] + [(HYBRID, "")]
    passes: list[dict[str, Any]] = []
    differences = 0
    try:
        for n in range(rounds):
            times: dict[tuple[str, str], list[float]] = {system: [] for system in systems}
            digests: dict[tuple[str, str], list[str]] = {system: [] for system in systems}
            for q, (text, scopes) in enumerate(asked):
                shift = (n + q) % len(systems)
                for tree, case in systems[shift:] + systems[:shift]:
                    if tree == HYBRID:
                        started = time.perf_counter()
                        hybrid(Question(text, frozenset()))
                        ms, digest = (time.perf_counter() - started) * 1000, ""
                    else:
                        granted = EVERY_SCOPE if case == CASES[0] else scopes
                        ms, digest = workers[tree].ask(text, granted)
                    digests[tree, case].append(digest)
                    if q >= WARMUP:
                        times[tree, case].append(ms)
            differences += sum(
                a != b
                for case in CASES
                for a, b in zip(digests["baseline", case], digests["current", case], strict=True)
            )
            p50 = {system: statistics.median(ms) for system, ms in times.items()}
            entry: dict[str, Any] = {
                "round": n,
                "load_average": list(os.getloadavg()),
                "hybrid_p50_ms": round(p50[HYBRID, ""], 2),
            }
            for case in CASES:
                base, new = p50["baseline", case], p50["current", case]
                entry[case] = {
                    "baseline_p50_ms": round(base, 2),
                    "current_p50_ms": round(new, 2),
                    "current_vs_baseline": round(new / base, 3),
                    "baseline_vs_hybrid": round(base / p50[HYBRID, ""], 3),
                    "current_vs_hybrid": round(new / p50[HYBRID, ""], 3),
                }
            passes.append(entry)
            print(json.dumps(entry), file=sys.stderr, flush=True)
    finally:
        for worker in workers.values():
            worker.close()
        driver.close()
    keys = ("current_vs_baseline", "baseline_vs_hybrid", "current_vs_hybrid")
    summary = {
        case: {
            key: {
                "min": min(p[case][key] for p in passes),
                "median": round(statistics.median(p[case][key] for p in passes), 3),
                "max": max(p[case][key] for p in passes),
            }
            for key in keys
        }
        for case in CASES
    }
    return {
        "questions": len(asked) - WARMUP,
        "rounds": rounds,
        "baseline_src": str(baseline),
        "current_src": str(current),
        "responses_compared": rounds * len(CASES) * len(asked),
        "responses_different": differences,
        "summary": summary,
        "passes": passes,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--baseline", type=Path, help="an older tree's src/")
    parser.add_argument("--current", type=Path, help="the tree to measure's src/")
    parser.add_argument("--size", type=int, default=10_000, help="the graph's chunk count")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the JSON result here")
    args = parser.parse_args(argv)
    if args.worker:
        asyncio.run(_serve(sys.stdin, sys.stdout))
        return
    if args.baseline is None or args.current is None:
        parser.error("--baseline and --current are required")
    report = run_pairs(
        args.baseline.resolve(), args.current.resolve(), args.size, args.queries, args.rounds
    )
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    if report["responses_different"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
