"""Where one retrieval's time goes on Neo4j, and what it returned (issue 17).

On a graph that ``graphctx bench neo4j`` left on a server (``NEO4J_*``; namespace
``bench-neo4j``), the bench's questions (the same seeded sample and principals as
``on_neo4j.measure``) are asked through ``ContextProvider.aretrieve`` as the bench asks them,
with every scope and with the question's 1-3 scopes. Each part of a request is timed by a
wrapper around it (inclusive wall times, ms): the query embedding, each statement (wall;
the server's ``result_available_after`` + ``result_consumed_after``; the records' conversion
to rows), and the Python stages between. Per request it also keeps what a caller sees of the
response: each item's chunk, scores and span, and the manifest's packed blocks (content
digests, tokens). Run it once under the tree to measure (``PYTHONPATH=<tree>/src``) and once
under another, and compare the ``responses`` of the two JSON files:

    python -m graphctx_lab.bench.neo4j_request_parts --rounds 2 --out new.json
    python -m graphctx_lab.bench.neo4j_request_parts --compare base.json new.json

The wrappers cost a few microseconds each; figures are for accounting, not for ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import neo4j

import graphctx.provider as provider_module
import graphctx.retrieve.bundle as bundle_module
import graphctx.store.neo4j.store as store_module
from graphctx.context import default_token_counter
from graphctx.contract import ContextResponse
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore, parse_location
from graphctx_lab.bench.neo4j_candidate_pairs import EVERY_SCOPE, plan
from graphctx_lab.bench.on_neo4j.corpus import Question
from graphctx_lab.bench.on_neo4j.measure import WARMUP, graphctx_ask
from graphctx_lab.bench.store import default_data_dir

__all__ = ["compare", "run_parts"]

Parts = defaultdict[str, float]
_STATEMENTS = {"candidate search": "candidates", "fetch chunks": "gate"}


def _timer(parts: Parts, key: str, work: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(work)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return work(*args, **kwargs)
        finally:
            parts[key] += (time.perf_counter() - started) * 1000

    return timed


def _async_timer(parts: Parts, key: str, work: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(work)
    async def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await work(*args, **kwargs)
        finally:
            parts[key] += (time.perf_counter() - started) * 1000

    return timed


def _statement_timer(parts: Parts) -> Callable[..., Any]:
    """``sessions.bounded_statement`` as the store runs it, with the server's times kept."""

    async def bounded_statement(
        driver: neo4j.AsyncDriver,
        database: str,
        query: Any,
        parameters: dict[str, Any],
        budget_s: float,
        *,
        grace_s: float,
        action: str,
        row: Callable[[neo4j.Record], dict[str, Any]] = neo4j.Record.data,
    ) -> list[dict[str, Any]]:
        key = _STATEMENTS.get(action, action)
        started = time.perf_counter()
        statement = neo4j.Query(query, metadata={"app": "graphctx"}, timeout=budget_s)
        async with driver.session(database=database, default_access_mode=neo4j.READ_ACCESS) as s:
            result = await s.run(statement, parameters)
            records = [record async for record in result]
            converting = time.perf_counter()
            rows = [row(record) for record in records]
            converted = time.perf_counter()
            summary = await result.consume()
        parts[f"{key}: wall"] += (time.perf_counter() - started) * 1000
        parts[f"{key}: rows from records"] += (converted - converting) * 1000
        parts[f"{key}: server"] += float(
            (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
        )
        return rows

    return bounded_statement


def _instrument(parts: Parts, embedder: UniversalSentenceEncoderEmbedder) -> None:
    store: Any = store_module
    store.bounded_statement = _statement_timer(parts)
    store.chunk_view = _timer(parts, "py: chunk views", store.chunk_view)
    store_class: Any = Neo4jGraphStore
    store_class.search_candidates = _async_timer(
        parts, "search_candidates", store_class.search_candidates
    )
    lexical = store_class._lexical_hits
    store_class._lexical_hits = staticmethod(_timer(parts, "py: lexical ranking", lexical))
    for module, name, key in (
        (provider_module, "fuse_lists", "py: fusion"),
        (provider_module, "assemble_response", "py: response"),
        (bundle_module, "rank_fresh", "py: freshness"),
        (bundle_module, "assess_relevance", "py: relevance"),
        (bundle_module, "pack_to_budget", "py: packing"),
    ):
        setattr(module, name, _timer(parts, key, getattr(module, name)))
    for module, name, key in (
        (provider_module, "gather_candidates", "gather_candidates"),
        (bundle_module, "verify_visible", "gate: verify_visible"),
    ):
        setattr(module, name, _async_timer(parts, key, getattr(module, name)))
    embed = embedder.embed_query
    object.__setattr__(embedder, "embed_query", _timer(parts, "query embedding", embed))


def seen(response: ContextResponse) -> dict[str, Any]:
    """What a caller sees of a response, timings left out."""
    return {
        "answerable": response.answerable,
        "items": [
            [
                i.chunk_id,
                i.rank,
                i.retrieval_scores.model_dump(),
                i.span.model_dump(),
                i.tokens,
                i.truncated,
            ]
            for i in response.items
        ],
        "blocks": [b.model_dump() for b in response.manifest.blocks],
        "stages": [[s.stage, s.status.value, s.candidates] for s in response.manifest.stages],
        "denied": [d.model_dump() for d in response.denied],
    }


async def run_parts(rounds: int) -> dict[str, Any]:
    where = parse_location(os.environ["NEO4J_URI"], os.environ)
    store = Neo4jGraphStore(where.uri, where.auth, where.database)
    embedder = UniversalSentenceEncoderEmbedder()
    parts: Parts = defaultdict(float)
    _instrument(parts, embedder)
    await store.open()
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    asked = plan(default_data_dir(), 10_000, 100)
    timed: dict[str, defaultdict[str, list[float]]] = {
        case: defaultdict(list) for case in ("all scopes", "1-3 scopes")
    }
    responses: dict[str, list[Any]] = {case: [] for case in timed}
    try:
        for n in range(rounds):
            for q, (text, scopes) in enumerate(asked):
                for case, granted in (("all scopes", EVERY_SCOPE), ("1-3 scopes", scopes)):
                    parts.clear()
                    started = time.perf_counter()
                    response = await graphctx_ask(provider, Question(text, frozenset()), granted)
                    parts["request"] = (time.perf_counter() - started) * 1000
                    if n == 0:
                        responses[case].append(seen(response))
                    if q >= WARMUP:
                        for key, ms in parts.items():
                            timed[case][key].append(ms)
    finally:
        await store.close()
    return {
        "graphctx": str(Path(provider_module.__file__).parents[1]),
        "rounds": rounds,
        "questions": len(asked) - WARMUP,
        "load_average": list(os.getloadavg()),
        "p50_ms": {
            case: {key: round(statistics.median(v), 2) for key, v in sorted(found.items())}
            for case, found in timed.items()
        },
        "responses": responses,
    }


def compare(base: Path, new: Path) -> int:
    """Requests whose responses differ between two runs' JSON (0: identical)."""
    old = json.loads(base.read_text(encoding="utf-8"))["responses"]
    now = json.loads(new.read_text(encoding="utf-8"))["responses"]
    differences = 0
    for case in old:
        for q, (a, b) in enumerate(zip(old[case], now[case], strict=True)):
            if a != b:
                differences += 1
                print(f"{case} question {q}: responses differ", file=sys.stderr)
        print(f"{case}: {len(old[case])} responses compared")
    print(f"{differences} different")
    return differences


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write the JSON result here")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BASE", "NEW"))
    args = parser.parse_args(argv)
    if args.compare:
        sys.exit(1 if compare(*args.compare) else 0)
    report = asyncio.run(run_parts(args.rounds))
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "responses"}, indent=2))


if __name__ == "__main__":
    main()
