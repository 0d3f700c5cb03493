"""``graphctx serve`` as an operator starts it: a real process on a real port.

No API keys is a refusal unless gateway mode is asked for; a port in use is the CLI's one-line
error; the JSON log lines carry no terminal colour codes.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from graphctx.testing.service import GATEWAY_SECRET, key_entries

START_TIMEOUT_S = 120.0
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_config(path: Path, settings: dict[str, object]) -> Path:
    path.write_text(json.dumps(settings), encoding="utf-8")
    return path


def serve_argv(config: Path, store: Path, port: int, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "graphctx.cli.main", "serve", "--config", str(config),
        "--store", str(store), "--port", str(port), *extra,
    ]  # fmt: skip


def wait_until(check: Callable[[], bool], server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert server.poll() is None, f"serve exited with {server.returncode}"
        if check():
            return
        time.sleep(0.2)
    raise AssertionError("serve never answered")


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def running(argv: list[str]) -> Iterator[tuple[str, list[str]]]:
    """Start serve, yield its URL and (after the block) the lines it wrote to stderr."""
    port = argv[argv.index("--port") + 1]
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    try:
        wait_until(lambda: healthy(url), server)
        yield url, lines
    finally:
        server.send_signal(signal.SIGTERM)
        stdout, stderr = server.communicate(timeout=60)
        lines += stderr.splitlines()
        assert stdout == ""


def test_serve_without_api_keys_refuses_to_start_with_one_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "service.json", {})
    done = subprocess.run(
        serve_argv(config, tmp_path / "store.sqlite", free_port()),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("graphctx: error [no_api_keys]: the service config has no API")
    assert "--allow-no-keys" in done.stderr
    assert not (tmp_path / "store.sqlite").exists()  # refused before anything was opened


def test_allow_no_keys_starts_in_gateway_mode_where_the_gateway_decides_identity(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "alpha"
    docs.mkdir()
    (docs / "runbook.md").write_text(
        "---\nscopes: [public]\n---\n# Rollback\n\nRoll back a deploy with the previous tag.\n",
        encoding="utf-8",
    )
    store = tmp_path / "store.sqlite"
    ingest = subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", "--store", str(store), "ingest", str(docs),
         "--namespace", "alpha"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert ingest.returncode == 0, ingest.stderr
    gateway = {"enabled": True, "secret": GATEWAY_SECRET, "allowed_projects": ["alpha"]}
    config = write_config(tmp_path / "service.json", {"gateway": gateway})
    argv = serve_argv(config, store, free_port(), "--allow-no-keys")
    body = {"query": "roll back a deploy", "principal_id": "gw-user", "allowed_scopes": ["public"]}
    body["namespace"] = "alpha"
    with running(argv) as (url, _):
        as_gateway = {
            "X-Graphctx-Gateway-Secret": GATEWAY_SECRET,
            "X-Graphctx-Principal": "gw-user",
            "X-Graphctx-Grants": "alpha=public",
        }
        answered = httpx.post(f"{url}/v1/context", json=body, headers=as_gateway, timeout=60)
        unauthenticated = httpx.post(f"{url}/v1/context", json=body, timeout=60)
    assert answered.status_code == 200, answered.text
    assert [i["document_id"] for i in answered.json()["items"]] == ["runbook.md"]
    assert unauthenticated.status_code == 401


def test_a_port_in_use_is_a_one_line_error_not_a_log_line(
    tmp_path: Path, api_keys: dict[str, str]
) -> None:
    config = write_config(tmp_path / "service.json", {"keys": key_entries(api_keys)})
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            serve_argv(config, tmp_path / "store.sqlite", port),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == (
        f"graphctx: error [port_in_use]: port {port} on 127.0.0.1 is already in use:"
        " stop what listens there, or pick another with --port\n"
    )


def test_serve_log_lines_are_json_without_terminal_colour_codes(
    tmp_path: Path, api_keys: dict[str, str]
) -> None:
    config = write_config(tmp_path / "service.json", {"keys": key_entries(api_keys)})
    with running(serve_argv(config, tmp_path / "store.sqlite", free_port())) as (url, lines):
        assert httpx.get(f"{url}/healthz", timeout=30).status_code == 200
    entries = [json.loads(line) for line in lines]
    loggers = {entry["logger"] for entry in entries}
    assert "uvicorn.error" in loggers  # uvicorn's own lines ("Started server process") are there
    assert [e for e in entries if "color_message" in e] == []
    assert not any("\x1b[" in line for line in lines)


def test_the_json_formatter_drops_uvicorns_colour_copy_of_the_message() -> None:
    import logging

    from graphctx.server.logs import JsonFormatter

    record = logging.LogRecord(
        "uvicorn.error", logging.INFO, __file__, 1, "Started [%d]", (7,), None
    )
    record.color_message = "Started [\x1b[36m%d\x1b[0m]"
    record.port = 8080  # any other extra field is kept
    entry = json.loads(JsonFormatter().format(record))
    assert (entry["message"], entry["port"], "color_message" in entry) == (
        "Started [7]",
        8080,
        False,
    )
