"""``graphctx bench http``: concurrent clients against a real server on the demo corpus.

The server runs in its own processes (``python -m graphctx.server serve --workers N``) so
the load generator does not share its interpreter lock; the clients are asyncio tasks over one httpx
pool. Requests alternate between ``/v1/context`` and the project search, cycling through the
demo questions and principals. Every non-2xx answer or transport error counts as an error.
The machine's load average before and after is in the report: on a shared machine the
figures only compare with a run made next to them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import yaml

from graphctx.demo.run import DEMO_NAMESPACE, corpus_path, load_script
from graphctx.server.cli import hash_new_key
from graphctx_lab.progress import Progress

__all__ = ["run_load_bench"]

STARTUP_TIMEOUT_S: Final = 120.0
REQUEST_TIMEOUT_S: Final = 60.0
BENCH_MAX_TOKENS: Final = 800


@dataclass(frozen=True)
class _Call:
    path: str
    body: dict[str, Any]
    key: str


def run_load_bench(
    *,
    clients: int = 50,
    requests: int = 2_000,
    workers: int = 2,
    out: Path = Path("bench-results/http.json"),
    work_dir: Path | None = None,
) -> dict[str, Any]:
    """Serve the demo corpus, run ``requests`` requests from ``clients`` concurrent clients,
    write the JSON report to ``out`` and return it."""
    progress = Progress("graphctx bench http")
    with tempfile.TemporaryDirectory(prefix="graphctx-bench-http-") as tmp:
        root = work_dir or Path(tmp)
        store = root / "demo.sqlite"
        progress.update("ingesting the demo corpus", final=True)
        ingest_seconds = _ingest_demo(store)
        keys, config = _write_config(root)
        port = _free_port()
        progress.update(f"starting graphctx serve on port {port}", final=True)
        server = _start_server(config, store, port, workers)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_ready(base, server)
            calls = _calls(keys)
            progress.update(f"{requests} requests from {clients} clients", final=True)
            load_before = os.getloadavg()
            started = time.perf_counter()
            drive = _drive(base, calls, clients, requests, progress)
            latencies, errors, statuses = asyncio.run(drive)
            wall = time.perf_counter() - started
            load_after = os.getloadavg()
        finally:
            server.terminate()
            server.wait(timeout=30)
    report = _report(clients, requests, latencies, errors, statuses, wall, ingest_seconds)
    report["workers"] = workers
    report["load_average"] = {
        "before": [round(x, 2) for x in load_before],
        "after": [round(x, 2) for x in load_after],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _ingest_demo(store: Path) -> float:
    from graphctx.adapters import open_provider

    started = time.perf_counter()
    with open_provider(store) as provider:
        report = provider.ingest_path(corpus_path(), namespace=DEMO_NAMESPACE)
    if report.errors:
        raise RuntimeError(f"demo ingest failed: {report.errors[0]}")
    return time.perf_counter() - started


def _write_config(root: Path) -> tuple[dict[str, str], Path]:
    script = load_script()
    keys: dict[str, str] = {}
    entries = []
    for principal, scopes in sorted(script.grants.items()):
        key, hashed = hash_new_key(principal)
        keys[principal] = key
        entries.append(
            {
                "id": principal,
                "hash": hashed,
                "principal": principal,
                "projects": {DEMO_NAMESPACE: {"scopes": sorted(scopes)}},
            }
        )
    config = {
        "keys": entries,
        "limits": {"rate_per_second": 1_000_000, "rate_burst": 1_000_000},
        "log_level": "WARNING",
    }
    path = root / "service.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return keys, path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_server(config: Path, store: Path, port: int, workers: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "graphctx.server",
        "serve",
        "--config",
        str(config),
        "--store",
        str(store),
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_ready(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the server did not become ready")


def _calls(keys: dict[str, str]) -> list[_Call]:
    script = load_script()
    calls: list[_Call] = []
    for question in script.questions:
        for principal in question.principals:
            scopes = sorted(script.grants[principal])
            calls.append(
                _Call(
                    "/v1/context",
                    {
                        "query": question.query,
                        "principal_id": principal,
                        "allowed_scopes": scopes,
                        "namespace": DEMO_NAMESPACE,
                        "max_tokens": BENCH_MAX_TOKENS,
                    },
                    keys[principal],
                )
            )
            calls.append(
                _Call(
                    f"/v1/projects/{DEMO_NAMESPACE}/search",
                    {
                        "query": question.query,
                        "limit": 5,
                        "max_tokens": BENCH_MAX_TOKENS,
                    },
                    keys[principal],
                )
            )
    return calls


async def _drive(
    base: str, calls: list[_Call], clients: int, total: int, progress: Progress
) -> tuple[list[float], int, dict[str, int]]:
    """Latencies, error count and outcome counts (HTTP status, plus the bundle's reason)."""
    work = iter(itertools.islice(itertools.cycle(calls), total))
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    errors = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=REQUEST_TIMEOUT_S) as http:

        async def client() -> None:
            nonlocal errors
            for call in work:  # the iterator is shared: each request is taken once
                started = time.perf_counter()
                try:
                    response = await http.post(
                        call.path, json=call.body, headers={"X-API-Key": call.key}
                    )
                    status = str(response.status_code)
                    if response.status_code == 200:
                        body = response.json()
                        reason = body.get("reason") or "answerable"
                        statuses[reason] = statuses.get(reason, 0) + 1
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
                if not status.startswith("2"):
                    errors += 1
                done = len(latencies)
                progress.update(f"{done}/{total} requests, {errors} errors", final=done == total)

        await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, errors, statuses


def _report(
    clients: int,
    requests: int,
    latencies: list[float],
    errors: int,
    statuses: dict[str, int],
    wall: float,
    ingest_seconds: float,
) -> dict[str, Any]:
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2)

    return {
        "benchmark": "http",
        "clients": clients,
        "requests": requests,
        "completed": len(latencies),
        "errors": errors,
        "outcomes": statuses,
        "wall_s": round(wall, 3),
        "throughput_rps": round(len(latencies) / wall, 1) if wall else None,
        "latency_ms": {
            "p50": pct(0.50),
            "p95": pct(0.95),
            "p99": pct(0.99),
            "mean": round(statistics.fmean(ordered) * 1000, 2),
            "max": round(ordered[-1] * 1000, 2),
        },
        "demo_ingest_s": round(ingest_seconds, 2),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
