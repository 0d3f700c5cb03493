"""No key, secret or query text reaches the logs, whatever the request did (docs/security.md §3).

The service's own log setup (``configure_logging``, the JSON lines ``graphctx serve`` writes)
is pointed at a buffer at DEBUG, and every other logger is caught at DEBUG through the root
logger; then one service sees successes, failed and forged authentication, 4xx and 5xx answers,
explorer logins with a wrong and a right key, and MCP over HTTP. The log must hold records of
all that, and none of the secrets the requests carried.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from test_mcp_http import ask, run, text_of
from test_ui_login import sign_in

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server.app import create_app
from graphctx.server.keys import generate_key, parse_key
from graphctx.server.logs import JsonFormatter, configure_logging
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.faulty_store import Fault, FaultKind, FaultPlan, FaultyStore
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import GATEWAY_SECRET, Harness, key_entries, service_settings
from graphctx_lab.chaos.fault_service import context_body, poll_until, problem_of

QUERY_TEXT = "how do I roll back a deploy of the zqx-logged-question-5521"
FORGED_GATEWAY_SECRET = "gw-forged-secret-fedcba9876543210"
GARBAGE_BEARER = "not-a-graphctx-key-zqx-garbage-0042"
SERVICE_LOGGERS = ("graphctx", "uvicorn", "uvicorn.error", "uvicorn.access", "mcp", "neo4j")
CLIENT_LOGGERS = ("mcp.client", "httpx", "httpcore")
"""The test's own clients run in this process and log what they send; the service does not."""


@dataclass(frozen=True)
class Secrets:
    """Every value that must never be logged, by what it is (for a readable failure)."""

    values: dict[str, str]

    def found_in(self, text: str) -> list[str]:
        return sorted(name for name, value in self.values.items() if value in text)


@pytest.fixture
def captured_logs(caplog: pytest.LogCaptureFixture) -> Iterator[io.StringIO]:
    """The production JSON-lines setup at DEBUG into a buffer, restored afterwards."""
    saved = {
        name: (list(lg.handlers), lg.propagate, lg.level, lg.disabled)
        for name in SERVICE_LOGGERS
        for lg in [logging.getLogger(name)]
    }
    buffer = io.StringIO()
    configure_logging("DEBUG", buffer)
    logging.getLogger("uvicorn.access").disabled = False  # catch it too, even if unused
    caplog.set_level(logging.DEBUG)  # every other logger, through the root
    try:
        yield buffer
    finally:
        for name, (handlers, propagate, level, disabled) in saved.items():
            logger = logging.getLogger(name)
            logger.handlers[:] = handlers
            logger.propagate, logger.disabled = propagate, disabled
            logger.setLevel(level)


@pytest.fixture
def service_with_a_failing_listing(
    captured_logs: io.StringIO,
    corpus_store: Path,
    tmp_path: Path,
    api_keys: dict[str, str],
    embedder: UniversalSentenceEncoderEmbedder,
) -> Iterator[tuple[Harness, str]]:
    """A service whose document listing fails (503) and whose settings hold a stdio MCP key."""
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(corpus_store, copy)
    inner = SqliteGraphStore(copy)
    faulty = FaultyStore(inner, FaultPlan({"list_documents": Fault(FaultKind.FAIL)}))
    provider = ContextProvider(faulty, embedder, default_token_counter(), CallerAssertedGrants())
    stdio_key = generate_key("stdio")
    settings = service_settings(api_keys).model_copy(update={"mcp_stdio_key": SecretStr(stdio_key)})
    asyncio.run(inner.open())  # FaultyStore leaves the real store's lifecycle to its owner
    try:
        with serve_in_thread(create_app(settings, provider)) as url:
            yield Harness(url=url, keys=api_keys, store=copy), stdio_key
    finally:
        faulty.release()
        asyncio.run(inner.close())


def secret_part(key: str) -> str:
    """The key's secret as the service parses it: it may itself hold ``_`` (URL-safe base64),
    so splitting at the last ``_`` can leave a fragment as short as one character."""
    parsed = parse_key(key)
    assert parsed is not None, key
    return parsed.secret


def from_a_client(json_line: str) -> bool:
    return str(json.loads(json_line)["logger"]).startswith(CLIENT_LOGGERS)


def exercise_every_outcome(harness: Harness) -> dict[str, int]:
    """One of each: the status each request got, so the test knows they all happened."""
    rita_key = harness.keys["rita"]
    tampered = rita_key[:-6] + "zzzzzz"
    forged = {
        "X-Graphctx-Gateway-Secret": FORGED_GATEWAY_SECRET,
        "X-Graphctx-Principal": "mallory",
        "X-Graphctx-Grants": "alpha=secret",
    }
    trusted = {
        "X-Graphctx-Gateway-Secret": GATEWAY_SECRET,
        "X-Graphctx-Principal": "rita",  # the principal the question asks as
        "X-Graphctx-Grants": "alpha=public",
    }
    statuses: dict[str, int] = {}
    question = context_body(query=QUERY_TEXT)
    with harness.client("rita") as rita, harness.client() as anonymous:
        statuses["success"] = rita.post("/v1/context", json=question).status_code
        statuses["search"] = rita.post(
            "/v1/projects/alpha/search", json={"query": QUERY_TEXT}
        ).status_code
        statuses["tampered_key"] = anonymous.post(
            "/v1/context", json=question, headers={"Authorization": f"Bearer {tampered}"}
        ).status_code
        statuses["garbage_key"] = anonymous.post(
            "/v1/context", json=question, headers={"X-API-Key": GARBAGE_BEARER}
        ).status_code
        statuses["forged_gateway"] = anonymous.post(
            "/v1/context", json=question, headers=forged
        ).status_code
        statuses["trusted_gateway"] = anonymous.post(
            "/v1/context", json=question, headers=trusted
        ).status_code
        statuses["invalid_request"] = rita.post(
            "/v1/context", json=context_body(query=QUERY_TEXT, max_tokens=10**9)
        ).status_code
        failing = rita.get("/v1/projects/alpha/documents")
        statuses["store_failure"] = problem_of(failing)[0]
    with httpx.Client(base_url=harness.url, timeout=60, follow_redirects=False) as browser:
        statuses["ui_wrong_key"] = sign_in(browser, tampered).status_code
        statuses["ui_right_key"] = sign_in(browser, rita_key).status_code
        statuses["ui_search"] = browser.get(
            "/ui/search", params={"project": "alpha", "q": QUERY_TEXT}
        ).status_code
    answer = run(harness, "rita", lambda c: c.call_tool("retrieve_context", ask(query=QUERY_TEXT)))
    statuses["mcp_retrieve"] = 200 if "alpha-runbook" in text_of(answer) else 500
    with httpx.Client(base_url=harness.url, timeout=60) as client:
        statuses["mcp_tampered_key"] = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Authorization": f"Bearer {tampered}",
                "Accept": "application/json, text/event-stream",
            },
        ).status_code
    return statuses


def test_no_key_secret_or_query_text_is_ever_logged(
    service_with_a_failing_listing: tuple[Harness, str],
    captured_logs: io.StringIO,
    caplog: pytest.LogCaptureFixture,
) -> None:
    harness, stdio_key = service_with_a_failing_listing
    statuses = exercise_every_outcome(harness)
    secrets = Secrets(
        {
            **{f"api key {name}": key for name, key in harness.keys.items()},
            "api key secret part": secret_part(harness.keys["rita"]),
            "tampered key": harness.keys["rita"][:-6] + "zzzzzz",
            "garbage bearer": GARBAGE_BEARER,
            "gateway secret": GATEWAY_SECRET,
            "forged gateway secret": FORGED_GATEWAY_SECRET,
            "stdio MCP key": stdio_key,
            "query text": QUERY_TEXT,
        }
    )
    service_log = "\n".join(
        line for line in captured_logs.getvalue().splitlines() if not from_a_client(line)
    )
    other_log = "\n".join(
        JsonFormatter().format(record)
        for record in caplog.records
        if not record.name.startswith(CLIENT_LOGGERS)
    )
    assert statuses == {
        "success": 200,
        "search": 200,
        "tampered_key": 401,
        "garbage_key": 401,
        "forged_gateway": 401,
        "trusted_gateway": 200,
        "invalid_request": 422,
        "store_failure": 503,
        "ui_wrong_key": 401,
        "ui_right_key": 303,
        "ui_search": 200,
        "mcp_retrieve": 200,
        "mcp_tampered_key": 401,
    }
    assert service_log.count('"logger": "graphctx.access"') >= len(statuses)
    assert secrets.found_in(service_log) == []
    assert secrets.found_in(other_log) == []


NEO4J_PASSWORD = "neo4j-pw-zqx-never-logged-3141"
NEO4J_WRITE_PASSWORD = "neo4j-write-pw-zqx-never-logged-2718"
REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0  # loading the embedder dominates


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_graphctx_serve_never_writes_a_secret_to_stderr_even_when_neo4j_is_unreachable(
    tmp_path: Path, api_keys: dict[str, str]
) -> None:
    """The real entry point, its own log setup at DEBUG, a Neo4j store it keeps failing to open."""
    config = tmp_path / "service.json"
    settings = {
        "keys": key_entries(api_keys),
        "gateway": {"enabled": True, "secret": GATEWAY_SECRET, "allowed_projects": ["alpha"]},
        "log_level": "DEBUG",
    }
    config.write_text(json.dumps(settings), encoding="utf-8")
    stdio_key = generate_key("stdio")
    unreachable = f"neo4j://neo4j:{NEO4J_PASSWORD}@127.0.0.1:{free_port()}/neo4j"
    port = free_port()
    environment = {
        **os.environ,
        "GRAPHCTX_MCP_STDIO_KEY": stdio_key,
        "NEO4J_WRITE_USER": "writer",
        "NEO4J_WRITE_PASSWORD": NEO4J_WRITE_PASSWORD,
    }
    args = ["serve", "--config", str(config), "--store", unreachable, "--port", str(port)]
    server = subprocess.Popen(
        [sys.executable, "-m", "graphctx.server", *args],
        cwd=REPO,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    tampered = api_keys["rita"][:-6] + "zzzzzz"
    forged = {"X-Graphctx-Gateway-Secret": FORGED_GATEWAY_SECRET, "X-Graphctx-Principal": "eve"}
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            assert poll_until(lambda: _answers(client), START_TIMEOUT_S), "serve never started"
            question = context_body(query=QUERY_TEXT)
            bearer = {"Authorization": f"Bearer {api_keys['rita']}"}
            statuses = [
                client.get("/readyz").status_code,
                client.post("/v1/context", json=question, headers=bearer).status_code,
                client.post(
                    "/v1/context", json=question, headers={"Authorization": f"Bearer {tampered}"}
                ).status_code,
                client.post("/v1/context", json=question, headers=forged).status_code,
            ]
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert statuses == [503, 503, 401, 401]
    assert '"logger": "graphctx.access"' in stderr
    assert "opening neo4j://127.0.0.1:" in stderr  # the failing location was logged, sans password
    leaked = Secrets(
        {
            **{f"api key {name}": key for name, key in api_keys.items()},
            "tampered key": tampered,
            "gateway secret": GATEWAY_SECRET,
            "forged gateway secret": FORGED_GATEWAY_SECRET,
            "stdio MCP key": stdio_key,
            "neo4j password": NEO4J_PASSWORD,
            "neo4j write password": NEO4J_WRITE_PASSWORD,
            "query text": QUERY_TEXT,
        }
    ).found_in(stderr)
    assert leaked == []


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def test_driver_warnings_are_json_lines_and_its_debug_traffic_is_never_logged(
    captured_logs: io.StringIO,
) -> None:
    logging.getLogger("neo4j.io").debug("C: RUN 'MATCH (n) RETURN n' {'secret': 'x'}")
    logging.getLogger("neo4j.pool").warning("Unable to retrieve routing information")
    lines = [json.loads(line) for line in captured_logs.getvalue().splitlines()]
    assert [(e["logger"], e["level"], e["message"]) for e in lines] == [
        ("neo4j.pool", "warning", "Unable to retrieve routing information")
    ]
