"""One size step's measurement: every system on the same questions, in a rotating order.

Systems take turns per question and warm-up queries are excluded. graphctx latency is the full
``aretrieve``; the neo4j-graphrag latency is query embedding plus ``search()``. Recall is
counted against the gold passages the principal may see; any result outside its scopes is a
leak.
"""

from __future__ import annotations

import random
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.provider import ContextProvider
from graphctx_lab.bench.on_neo4j.corpus import BENCH_NAMESPACE, SEED, BenchDocument, Question
from graphctx_lab.bench.on_neo4j.graphrag import QueryParseFailure
from graphctx_lab.bench.on_neo4j.systems import (
    GRAPHCTX_ALL,
    GRAPHCTX_SCOPED,
    RECALL_KS,
    SYSTEMS,
    TOP_K,
)
from graphctx_lab.bench.store import SCOPE_COUNT, percentiles

__all__ = ["MAX_TOKENS", "TIMEOUT_MS", "WARMUP", "Tally", "graphctx_ask", "measure"]

WARMUP = 5
MAX_TOKENS = 8_000  # room for at least TOP_K packed passages
TIMEOUT_MS = 30_000


async def graphctx_ask(provider: ContextProvider, question: Question, scopes: list[str]) -> Any:
    request = ContextRequest(
        query=question.text,
        principal_id="bench",
        allowed_scopes=scopes,
        namespace=BENCH_NAMESPACE,
        retrieval_mode=RetrievalMode.HYBRID,
        max_tokens=MAX_TOKENS,
        timeout_ms=TIMEOUT_MS,
    )
    return await provider.aretrieve(request)


@dataclass
class Tally:
    latencies: list[float]
    recall: dict[int, list[float]]
    returned: list[int]
    stages: dict[str, list[float]]
    failures: int = 0
    partial: int = 0
    leaks: int = 0

    @classmethod
    def new(cls) -> Tally:
        return cls([], {k: [] for k in RECALL_KS}, [], {})

    def report(self) -> dict[str, Any]:
        return {
            "latency_ms": percentiles(self.latencies),
            **{
                f"recall@{k}": round(float(np.mean(v)), 4) if v else None
                for k, v in self.recall.items()
            },
            "questions_scored": len(self.recall[RECALL_KS[0]]),
            "mean_returned": round(float(np.mean(self.returned)), 2) if self.returned else 0,
            "failures": self.failures,
            "partial_responses": self.partial,
            "leaks": self.leaks,
            **(
                {"stage_ms": {k: percentiles(v) for k, v in sorted(self.stages.items())}}
                if self.stages
                else {}
            ),
        }


async def measure(
    provider: ContextProvider,
    graphrag_systems: dict[str, Callable[[Question], list[str]]],
    docs: list[BenchDocument],
    questions: list[Question],
    count: int,
    size: int,
) -> dict[str, Any]:
    scope_of = {d.key: d.scope for d in docs}
    eligible = [q for q in questions if q.gold <= scope_of.keys()]
    rng = random.Random(SEED)  # the same questions and principals at every size
    chosen = rng.sample(eligible, min(len(eligible), count + WARMUP))
    every_scope = [f"s{i}" for i in range(SCOPE_COUNT)]
    principals = [rng.sample(every_scope, rng.randint(1, 3)) for _ in chosen]
    tallies = {name: Tally.new() for name in SYSTEMS}
    for n, (question, scopes) in enumerate(zip(chosen, principals, strict=True)):
        shift = n % len(SYSTEMS)
        for name in SYSTEMS[shift:] + SYSTEMS[:shift]:
            granted = scopes if name == GRAPHCTX_SCOPED else every_scope
            tally = tallies[name]
            started = time.perf_counter()
            ranking: list[str] = []
            failed = partial = False
            stages: list[tuple[str, float]] = []
            if name in (GRAPHCTX_ALL, GRAPHCTX_SCOPED):
                response = await graphctx_ask(provider, question, granted)
                items = sorted(response.items, key=lambda i: -i.retrieval_scores.fused)
                ranking = [i.document_id for i in items]
                partial = response.manifest.partial
                stages = [(st.stage, float(st.elapsed_ms)) for st in response.manifest.stages]
            else:
                try:
                    ranking = graphrag_systems[name](question)
                except QueryParseFailure:
                    failed = True
            elapsed = (time.perf_counter() - started) * 1000
            if n < WARMUP:
                continue
            tally.latencies.append(elapsed)
            tally.failures += failed
            tally.partial += partial
            for stage, ms in stages:
                tally.stages.setdefault(stage, []).append(ms)
            ranking = list(dict.fromkeys(ranking))[:TOP_K]
            tally.returned.append(len(ranking))
            visible = set(granted)
            tally.leaks += sum(scope_of.get(key) not in visible for key in ranking)
            gold = {g for g in question.gold if scope_of[g] in visible}
            if gold:
                for k in RECALL_KS:
                    tally.recall[k].append(len(gold & set(ranking[:k])) / len(gold))
    return {
        "questions": len(chosen) - WARMUP,
        "warmup_excluded": WARMUP,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "systems": {name: tallies[name].report() for name in SYSTEMS},
    }
