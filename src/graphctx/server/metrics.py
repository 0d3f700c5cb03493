"""Prometheus metrics, one registry per app (so several apps can live in one process).

The workers of one ``graphctx serve --workers N`` write their values to files in a shared
directory (prometheus_client's multiprocess mode, chosen by the supervisor before any metric
exists), and whichever worker answers ``/metrics`` sums every worker's: a scrape sees the
service, never the one process it happened to reach.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.multiprocess import MultiProcessCollector

from graphctx.contract import ContextResponse
from graphctx.errors import ConfigurationError

__all__ = ["Metrics"]

_LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_COUNT_BUCKETS = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89)


class Metrics:
    """``shared_dir``: the multiprocess directory every worker of the service writes to."""

    def __init__(self, shared_dir: Path | None = None) -> None:
        if shared_dir is not None and values.ValueClass is values.MutexValue:
            raise ConfigurationError(
                "shared metrics need prometheus_client's multiprocess mode"
                " (graphctx.server.workers.SharedState.create chooses it)"
            )
        self._shared_dir = shared_dir
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "graphctx_http_requests",
            "HTTP requests by route template and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.request_latency = Histogram(
            "graphctx_http_request_duration_seconds",
            "HTTP request latency.",
            ["route", "method"],
            buckets=_LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self.stage_latency = Histogram(
            "graphctx_stage_duration_seconds",
            "Retrieval pipeline stage latency.",
            ["stage", "status"],
            buckets=_LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self.responses = Counter(
            "graphctx_responses",
            "Evidence bundles by answerability and reason.",
            ["face", "answerable", "reason"],
            registry=self.registry,
        )
        self.results = Histogram(
            "graphctx_results_per_response",
            "Evidence items per bundle.",
            ["face"],
            buckets=_COUNT_BUCKETS,
            registry=self.registry,
        )
        self.denials = Counter(
            "graphctx_denials",
            "Evidence withheld, by stage and reason.",
            ["stage", "reason"],
            registry=self.registry,
        )
        self.llm_tokens = Counter(
            "graphctx_llm_tokens",
            "Tokens the optional LLM stages spent (cache hits spend none), by stage and kind.",
            ["stage", "kind"],
            registry=self.registry,
        )
        self.llm_calls = Counter(
            "graphctx_llm_calls",
            "Optional LLM stage calls, by stage and whether the response cache answered.",
            ["stage", "cache"],
            registry=self.registry,
        )
        self.errors = Counter(
            "graphctx_errors",
            "Errors returned, by stable code.",
            ["code"],
            registry=self.registry,
        )

    def observe_response(self, response: ContextResponse, face: str) -> None:
        for stage in response.manifest.stages:
            self.stage_latency.labels(stage.stage, stage.status.value).observe(
                stage.elapsed_ms / 1000
            )
        reason = response.reason.value if response.reason is not None else ""
        self.responses.labels(face, str(response.answerable).lower(), reason).inc()
        self.results.labels(face).observe(len(response.items))
        for denial in response.denied:
            self.denials.labels(denial.stage, denial.reason.value).inc(denial.count)
        for model in response.manifest.model_stages:
            self.llm_calls.labels(model.stage, "hit" if model.cached else "miss").inc()
            if model.usage is not None and not model.cached:
                self.llm_tokens.labels(model.stage, "prompt").inc(model.usage.prompt_tokens)
                self.llm_tokens.labels(model.stage, "completion").inc(model.usage.completion_tokens)

    def observe_error(self, code: str) -> None:
        self.errors.labels(code).inc()

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.request_latency.labels(route, method).observe(seconds)

    def render(self) -> bytes:
        if self._shared_dir is None:
            return generate_latest(self.registry)
        summed = CollectorRegistry()
        MultiProcessCollector(summed, path=str(self._shared_dir))  # type: ignore[no-untyped-call]
        return generate_latest(summed)
