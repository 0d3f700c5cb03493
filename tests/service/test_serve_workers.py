"""``graphctx serve --workers 2``: what one process guarantees holds for the whole service.

A real supervisor and two real workers on one port. Which worker answers is made certain by
keep-alive: a connection stays with the worker that accepted it, and which one that was is
read from /proc (the worker holding the server side of the connection), so each check below
sends part of its requests to each worker. Per-worker limiters would let each worker spend
a key's whole burst (and its whole failed-key budget); per-worker metrics would show each
scrape a part of the traffic.
"""

from __future__ import annotations

import http.client
import json
import math
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from graphctx.server.auth import FAILURE_BURST, FAILURES_PER_SECOND
from graphctx.testing.service import key_entries

START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
CONNECT_ATTEMPTS = 64
BURST = 4
WRONG_SECRET = "D" * 43
REPO = Path(__file__).resolve().parents[2]


@dataclass
class Service:
    port: int
    supervisor: subprocess.Popen[str]
    workers: tuple[int, int]
    _pinned: dict[int, http.client.HTTPConnection] = field(default_factory=dict)

    def get(self, worker: int, path: str, key: str | None = None) -> tuple[int, str]:
        """GET ``path`` from ``worker`` (status and body), on a connection it accepted."""
        headers = {} if key is None else {"X-API-Key": key}
        for attempt in range(2):
            conn = self._pinned.get(worker) or self._connect(worker)
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
                return response.status, response.read().decode("utf-8")
            except (http.client.HTTPException, OSError):
                conn.close()  # the worker closed an idle keep-alive connection: open another
                self._pinned.pop(worker, None)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _connect(self, worker: int) -> http.client.HTTPConnection:
        for _ in range(CONNECT_ATTEMPTS):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            assert conn.sock is not None
            if _owner(self.port, conn.sock.getsockname()[1], self.workers) == worker:
                self._pinned[worker] = conn
                return conn
            conn.close()
        raise AssertionError(f"no connection reached worker {worker}")


def _owner(server_port: int, client_port: int, workers: tuple[int, ...]) -> int | None:
    """The worker holding the server side of the connection from ``client_port``."""
    inode = None
    for line in Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1].split(":")[1], fields[2].split(":")[1]
        if int(local, 16) == server_port and int(remote, 16) == client_port:
            inode = fields[9]
    for pid in workers:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if fd.readlink().name == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii")
    return [int(child) for child in text.split()]


def _free_port() -> int:
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
    try:
        yield _wait_ready(supervisor, port)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.communicate(timeout=STOP_TIMEOUT_S)


def _wait_ready(supervisor: subprocess.Popen[str], port: int) -> Service:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert supervisor.poll() is None, supervisor.communicate()[1]
        children = _children(supervisor.pid)
        if len(children) == 2:
            service = Service(port, supervisor, (children[0], children[1]))
            try:
                if all(service.get(w, "/readyz")[0] == 200 for w in service.workers):
                    return service
            except (AssertionError, OSError):
                pass
        time.sleep(0.2)
    raise AssertionError("the workers never became ready")


def test_a_keys_request_burst_is_shared_by_the_workers(
    service: Service, api_keys: dict[str, str]
) -> None:
    first, second = service.workers
    on_first = [service.get(first, "/v1/whoami", api_keys["rita"])[0] for _ in range(3)]
    on_second = [service.get(second, "/v1/whoami", api_keys["rita"])[0] for _ in range(3)]
    assert on_first == [200, 200, 200]
    assert on_second == [200] * (BURST - 3) + [429] * (6 - BURST)


def test_a_key_ids_failed_check_budget_is_shared_by_the_workers(
    service: Service, api_keys: dict[str, str]
) -> None:
    """The budget refills (FAILURES_PER_SECOND), so what may pass depends on the time taken;
    one worker's budget per worker would let about twice the burst through."""
    wrong = f"gck_wes_{WRONG_SECRET}"
    attempts = FAILURE_BURST + 2
    for worker in service.workers:  # connected before the clock starts
        service.get(worker, "/healthz")
    started = time.monotonic()
    statuses = [
        service.get(worker, "/v1/whoami", wrong)[0]
        for worker in service.workers
        for _ in range(attempts)
    ]
    elapsed_s = time.monotonic() - started
    assert elapsed_s < FAILURE_BURST / FAILURES_PER_SECOND / 2, "too slow to tell"
    assert set(statuses) == {401, 429}
    assert statuses.count(401) <= FAILURE_BURST + math.ceil(elapsed_s * FAILURES_PER_SECOND)
    assert statuses[-1] == 429


def test_every_worker_answers_metrics_for_the_whole_service(
    service: Service, api_keys: dict[str, str]
) -> None:
    first, second = service.workers
    service.get(first, "/v1/whoami", api_keys["ada"])
    seen_by_first = _whoami_count(service.get(first, "/metrics")[1])
    service.get(second, "/v1/whoami", api_keys["ada"])
    seen_by_second = _whoami_count(service.get(second, "/metrics")[1])
    assert seen_by_second == seen_by_first + 1


def test_sigterm_stops_every_worker_and_the_supervisor_cleanly(service: Service) -> None:
    workers = service.workers
    for conn in service._pinned.values():
        conn.close()
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
