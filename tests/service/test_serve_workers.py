"""``graphctx serve --workers 2``: what one process guarantees holds for the whole service.

A real supervisor and two real workers on one socket. Which worker answers is made certain
by stopping the other one (SIGSTOP: it accepts nothing until SIGCONT), so each check below
sends part of its requests to each worker. Per-worker limiters would let each worker spend
a key's whole burst (and its whole failed-key budget); per-worker metrics would show each
scrape a part of the traffic.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from graphctx.server.auth import FAILURE_BURST, FAILURES_PER_SECOND
from graphctx.testing.service import key_entries

START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
BURST = 4
WRONG_SECRET = "D" * 43
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Service:
    url: str
    supervisor: subprocess.Popen[str]
    workers: tuple[int, int]

    @contextmanager
    def only(self, worker: int) -> Iterator[None]:
        """Every request in the block reaches ``worker``: the other one is stopped."""
        other = next(pid for pid in self.workers if pid != worker)
        os.kill(other, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(other, signal.SIGCONT)

    def get(self, path: str, key: str | None = None) -> httpx.Response:
        headers = {} if key is None else {"X-API-Key": key}
        with httpx.Client(base_url=self.url, timeout=30) as fresh:  # a connection of its own
            return fresh.get(path, headers=headers)


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii")
    return [int(child) for child in text.split()]


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, api_keys: dict[str, str]
) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("serve-workers")
    config = root / "service.json"
    limits = {"rate_per_second": 0.001, "rate_burst": BURST}
    config.write_text(json.dumps({"keys": key_entries(api_keys), "limits": limits}))
    port = _free_port()
    argv = [
        sys.executable, "-m", "graphctx.cli.main", "serve", "--config", str(config),
        "--store", str(root / "store.sqlite"), "--port", str(port), "--workers", "2",
    ]  # fmt: skip
    supervisor = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        workers = _wait_ready(supervisor, url)
        yield Service(url, supervisor, workers)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.communicate(timeout=STOP_TIMEOUT_S)


def _wait_ready(supervisor: subprocess.Popen[str], url: str) -> tuple[int, int]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert supervisor.poll() is None, supervisor.communicate()[1]
        children = _children(supervisor.pid)
        if len(children) == 2 and all(_ready_alone(supervisor, c, url) for c in children):
            return children[0], children[1]
        time.sleep(0.2)
    raise AssertionError("the workers never became ready")


def _ready_alone(supervisor: subprocess.Popen[str], worker: int, url: str) -> bool:
    service = Service(url, supervisor, tuple(_children(supervisor.pid)))  # type: ignore[arg-type]
    with service.only(worker):
        try:
            return service.get("/readyz").status_code == 200
        except httpx.TransportError:
            return False


def test_a_keys_request_burst_is_shared_by_the_workers(
    service: Service, api_keys: dict[str, str]
) -> None:
    first, second = service.workers
    with service.only(first):
        on_first = [service.get("/v1/whoami", api_keys["rita"]).status_code for _ in range(3)]
    with service.only(second):
        on_second = [service.get("/v1/whoami", api_keys["rita"]).status_code for _ in range(3)]
    assert on_first == [200, 200, 200]
    assert on_second == [200] * (BURST - 3) + [429] * (6 - BURST)


def test_a_key_ids_failed_check_budget_is_shared_by_the_workers(
    service: Service, api_keys: dict[str, str]
) -> None:
    """The budget refills (FAILURES_PER_SECOND), so what may pass depends on the time taken;
    one worker's budget per worker would let about twice the burst through."""
    wrong = {"X-API-Key": f"gck_wes_{WRONG_SECRET}"}
    attempts = FAILURE_BURST + 2
    first, second = service.workers
    started = time.monotonic()
    statuses = []
    for worker in (first, second):
        with service.only(worker), httpx.Client(base_url=service.url, timeout=30) as one:
            statuses += [one.get("/v1/whoami", headers=wrong).status_code for _ in range(attempts)]
    elapsed_s = time.monotonic() - started
    assert elapsed_s < FAILURE_BURST / FAILURES_PER_SECOND / 2, "too slow to tell"
    assert set(statuses) == {401, 429}
    assert statuses.count(401) <= FAILURE_BURST + math.ceil(elapsed_s * FAILURES_PER_SECOND)
    assert statuses[-1] == 429


def test_every_worker_answers_metrics_for_the_whole_service(
    service: Service, api_keys: dict[str, str]
) -> None:
    first, second = service.workers
    with service.only(first):
        service.get("/v1/whoami", api_keys["ada"])
        seen_by_first = _whoami_count(service.get("/metrics").text)
    with service.only(second):
        service.get("/v1/whoami", api_keys["ada"])
        seen_by_second = _whoami_count(service.get("/metrics").text)
    assert seen_by_second == seen_by_first + 1


def test_sigterm_stops_every_worker_and_the_supervisor_cleanly(service: Service) -> None:
    workers = service.workers
    service.supervisor.send_signal(signal.SIGTERM)
    _, stderr = service.supervisor.communicate(timeout=STOP_TIMEOUT_S)
    assert service.supervisor.returncode == 0, stderr
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    assert "Traceback" not in stderr


def _whoami_count(metrics: str) -> float:
    pattern = re.compile(r"^graphctx_http_requests_total\{([^}]*)\} (\S+)$", re.MULTILINE)
    return sum(
        float(value) for labels, value in pattern.findall(metrics) if 'route="/v1/whoami"' in labels
    )
