"""Added latency of each optional LLM stage, against the local recorded chat server.

The demo corpus (and its service graph) is ingested once; then every configuration answers
the same multi-issue questions (two demo questions asked as one, so the rerank runs too) as
the demo's on-call principal: stages off, each stage alone, all three, and all three again
with a warm response cache. The server (:mod:`graphctx_lab.recorded_chat`) answers by rule at
once, so what is measured is the stages' own cost — the extra HTTP round trip, prompt
building, parsing, and for query rewrite the extra searches — never a model's thinking time.
Results, written as JSON: p50 / p95 of the whole request per configuration, p50 added over
"off" (on a shared machine this difference is within the noise for the cheap stages), and
the p50 of each ``llm.*`` stage's own reported time (the stage's direct cost; query rewrite
also adds its searches, which run beside the original query's).
"""

from __future__ import annotations

import itertools
import json
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from graphctx.adapters import embedder_for
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.demo.run import DEMO_NAMESPACE, demo_provider, load_script
from graphctx.llm.chat import OpenAICompatibleChat
from graphctx.provider import ContextProvider
from graphctx.retrieve.assist import LlmStagesConfig
from graphctx.retrieve.authorize import StaticGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.recorded_chat import RecordedChatServer

__all__ = ["run_llm_stages_bench"]

PRINCIPAL = "dana"
ROUNDS = 8
CONFIGS: dict[str, dict[str, bool]] = {
    "off": {},
    "rewrite": {"rewrite": True},
    "route": {"route": True},
    "rerank": {"rerank": True},
    "all": {"rewrite": True, "route": True, "rerank": True},
}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _questions() -> list[str]:
    queries = [q.query for q in load_script().questions]
    return [f"{a} {b}" for a, b in itertools.pairwise(queries)]


def _request(query: str, scopes: list[str]) -> ContextRequest:
    return ContextRequest(
        query=query,
        principal_id=PRINCIPAL,
        allowed_scopes=scopes,
        namespace=DEMO_NAMESPACE,
        retrieval_mode=RetrievalMode.AUTO,
        timeout_ms=10_000,
    )


def _timed_ms(provider: ContextProvider, request: ContextRequest) -> tuple[float, dict[str, int]]:
    """Wall time of one request, and the elapsed time each llm.* stage reported."""
    started = time.perf_counter()
    response = provider.retrieve(request)
    wall = (time.perf_counter() - started) * 1000
    own = {s.stage: s.elapsed_ms for s in response.manifest.stages if s.stage.startswith("llm.")}
    return wall, own


def run_llm_stages_bench(out: Path) -> int:
    script = load_script()
    scopes = sorted(script.grants[PRINCIPAL])
    requests = [_request(q, scopes) for q in _questions()]
    embedder = embedder_for(None)
    runs = {name: (flags, 0) for name, flags in CONFIGS.items()}
    runs["all (warm cache)"] = (CONFIGS["all"], 1024)
    results: dict[str, dict[str, float | int]] = {}
    with tempfile.TemporaryDirectory(prefix="graphctx-llm-bench-") as tmp, ExitStack() as stack:
        with demo_provider(script, Path(tmp)):
            pass  # ingested; each configuration opens the store file on its own
        server = stack.enter_context(RecordedChatServer())
        providers: dict[str, ContextProvider] = {}
        for name, (flags, cache_size) in runs.items():
            chat = OpenAICompatibleChat(server.url, "recorded-rules", max_retries=0)
            config = LlmStagesConfig(chat, cache_size=cache_size, **flags) if flags else None
            provider = ContextProvider(
                SqliteGraphStore(Path(tmp) / "demo.sqlite"),
                embedder,
                default_token_counter(),
                StaticGrants(script.grants),
                llm_stages=config,
            )
            providers[name] = stack.enter_context(provider.open())
        for provider in providers.values():  # warm every path (and fill the one cache)
            for request in requests:
                provider.retrieve(request)
        times: dict[str, list[float]] = {name: [] for name in providers}
        own: dict[str, dict[str, list[int]]] = {name: {} for name in providers}
        calls = dict.fromkeys(providers, 0)
        for _ in range(ROUNDS):  # configurations interleaved: drift on a shared machine
            for name, provider in providers.items():  # hits them all alike
                for request in requests:
                    before = len(server.requests)
                    wall, stage_ms = _timed_ms(provider, request)
                    times[name].append(wall)
                    for stage, elapsed in stage_ms.items():
                        own[name].setdefault(stage, []).append(elapsed)
                    calls[name] += len(server.requests) - before
        for name, measured in times.items():
            results[name] = {
                "requests": len(measured),
                "p50_ms": round(statistics.median(measured), 2),
                "p95_ms": round(_percentile(measured, 0.95), 2),
                "chat_calls_per_request": round(calls[name] / len(measured), 2),
                **{
                    f"{stage}_p50_ms": round(statistics.median(values), 1)
                    for stage, values in sorted(own[name].items())
                },
            }
    off = float(results["off"]["p50_ms"])
    for row in results.values():
        row["added_p50_ms"] = round(float(row["p50_ms"]) - off, 2)
    report = {
        "what": "added retrieval latency per optional LLM stage against the local recorded"
        " (rule-following) chat server; measures the mechanism's cost, not a model's",
        "embedder": embedder.name,
        "questions": len(requests),
        "rounds": ROUNDS,
        "configurations": results,
    }
    out.mkdir(parents=True, exist_ok=True)
    target = out / "llm_stages.json"
    target.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    for name, row in results.items():
        print(
            f"{name:18} p50 {row['p50_ms']:8.1f} ms  p95 {row['p95_ms']:8.1f} ms"
            f"  added p50 {row['added_p50_ms']:7.1f} ms  calls/request"
            f" {row['chat_calls_per_request']}  "
            + "  ".join(f"{k} {v}" for k, v in row.items() if k.startswith("llm."))
        )
    print(f"wrote {target}")
    return 0
