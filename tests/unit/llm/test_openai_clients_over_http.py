"""What the two OpenAI-compatible clients (chat completions and embeddings) do on the wire.

Both talk to a real HTTP server on 127.0.0.1; the only thing faked is the hosted model. The
messages, attempt counts, headers and refusals pinned here are what callers and operators see.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from graphctx.embed import openai_compatible
from graphctx.embed.openai_compatible import OpenAICompatibleEmbedder
from graphctx.errors import ConfigurationError, EmbeddingError
from graphctx.llm import chat
from graphctx.llm.chat import ChatError, OpenAICompatibleChat
from graphctx.llm.port import ChatMessage

API_KEY = "sk-test-secret-456"
MESSAGES = [ChatMessage("system", "be brief"), ChatMessage("user", "hello")]


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes | None = None  # None: a canned answer for the endpoint asked
    headers: tuple[tuple[str, str], ...] = ()
    hang: bool = False


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, object]
    at: float


@dataclass
class ScriptedServer:
    url: str = ""
    script: list[Reply] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


def _canned(path: str, body: dict[str, object]) -> bytes:
    if path.endswith("/embeddings"):
        texts = body["input"]
        assert isinstance(texts, list)
        data = [{"index": i, "embedding": [1.0, float(i)]} for i in range(len(texts))]
        return json.dumps({"data": data}).encode()
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}]}).encode()


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            headers = {name.lower(): value for name, value in self.headers.items()}
            server.seen.append(Seen(self.path, headers, body, time.monotonic()))
            reply = server.script.pop(0) if server.script else Reply()
            if reply.hang:
                server.release.wait(timeout=10)
                return
            payload = _canned(self.path, body) if reply.body is None else reply.body
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def _serve(
    handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext | None = None
) -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    fake = ScriptedServer()
    with _serve(_handler(fake)) as httpd:
        fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        yield fake
        fake.release.set()


@pytest.fixture
def other_server() -> Iterator[ScriptedServer]:
    """Where a redirect points: it must never be asked anything."""
    fake = ScriptedServer()
    with _serve(_handler(fake)) as httpd:
        fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        yield fake


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    folder: Path = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


@pytest.fixture
def tls_server(self_signed: ssl.SSLContext) -> Iterator[str]:
    with _serve(_handler(ScriptedServer()), self_signed) as httpd:
        yield f"https://127.0.0.1:{httpd.server_address[1]}/v1"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def chat_client(url: str, **options: object) -> OpenAICompatibleChat:
    settings: dict[str, object] = {"api_key": API_KEY, "timeout_s": 5.0}
    settings.update(options)
    return OpenAICompatibleChat(url, "chat-model", **settings)  # type: ignore[arg-type]


def embedder(url: str, sleeps: list[float], **options: object) -> OpenAICompatibleEmbedder:
    settings: dict[str, object] = {"api_key": API_KEY, "timeout_s": 5.0, "sleep": sleeps.append}
    settings.update(options)
    return OpenAICompatibleEmbedder(url, "embed-model", **settings)  # type: ignore[arg-type]


# --- chat completions -----------------------------------------------------------------------


def test_chat_posts_model_temperature_and_messages_and_returns_the_text(
    server: ScriptedServer,
) -> None:
    answer = chat_client(server.url + "/", temperature=0.2).complete(MESSAGES)
    (seen,) = server.seen
    assert (answer, seen.path) == ("hi", "/v1/chat/completions")
    assert seen.body == {
        "model": "chat-model",
        "temperature": 0.2,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"},
        ],
    }
    assert (seen.headers["content-type"], seen.headers["authorization"]) == (
        "application/json",
        f"Bearer {API_KEY}",
    )
    assert "accept" not in seen.headers
    assert seen.headers["user-agent"].startswith("Python-urllib/")


def test_chat_without_a_key_sends_no_authorization(server: ScriptedServer) -> None:
    OpenAICompatibleChat(server.url, "m").complete(MESSAGES)
    assert "authorization" not in server.seen[0].headers


def test_chat_retries_a_429_after_half_a_second(server: ScriptedServer) -> None:
    server.script = [Reply(status=429, body=b"{}", headers=(("Retry-After", "0"),))]
    assert chat_client(server.url).complete(MESSAGES) == "hi"
    first, second = server.seen
    assert second.at - first.at >= 0.45  # BACKOFF_S, no jitter, Retry-After not honoured


def test_chat_gives_up_after_max_retries_plus_one_attempts(server: ScriptedServer) -> None:
    server.script = [Reply(status=500, body=b"{}"), Reply(status=503, body=b"{}")]
    with pytest.raises(ChatError) as caught:
        chat_client(server.url, max_retries=1).complete(MESSAGES)
    assert str(caught.value) == "[chat_failed] chat endpoint failed after 2 attempts: HTTP 503"
    assert (len(server.seen), caught.value.retryable) == (2, False)


def test_chat_fails_at_once_on_a_4xx_without_the_key_in_the_message(
    server: ScriptedServer,
) -> None:
    server.script = [Reply(status=401, body=b'{"error": "bad key"}')]
    client = chat_client(server.url)
    with pytest.raises(ChatError) as caught:
        client.complete(MESSAGES)
    assert str(caught.value) == "[chat_failed] chat endpoint refused the request: HTTP 401"
    assert isinstance(caught.value.__cause__, urllib.error.HTTPError)
    assert len(server.seen) == 1
    assert API_KEY not in str(caught.value) + repr(client)
    assert repr(client) == f"OpenAICompatibleChat({server.url!r}, model='chat-model')"


def test_chat_refuses_a_redirect_so_the_key_never_travels(
    server: ScriptedServer, other_server: ScriptedServer
) -> None:
    target = other_server.url + "/chat/completions"
    server.script = [Reply(status=307, body=b"", headers=(("Location", target),))]
    with pytest.raises(ChatError) as caught:
        chat_client(server.url).complete(MESSAGES)
    assert str(caught.value) == "[chat_failed] chat endpoint refused the request: HTTP 307"
    assert (len(server.seen), other_server.seen) == (1, [])


def test_chat_connection_refused_is_retried_then_named(server: ScriptedServer) -> None:
    client = chat_client(f"http://127.0.0.1:{closed_port()}/v1", max_retries=0)
    with pytest.raises(ChatError) as caught:
        client.complete(MESSAGES)
    assert str(caught.value) == "[chat_failed] chat endpoint failed after 1 attempts: URLError"


def test_chat_slower_than_its_timeout_fails_as_a_timeout(server: ScriptedServer) -> None:
    server.script = [Reply(hang=True)]
    started = time.monotonic()
    with pytest.raises(ChatError) as caught:
        chat_client(server.url, timeout_s=0.3, max_retries=0).complete(MESSAGES)
    assert str(caught.value) == "[chat_failed] chat endpoint failed after 1 attempts: TimeoutError"
    assert time.monotonic() - started < 5


def test_chat_retries_an_untrusted_certificate(tls_server: str) -> None:
    with pytest.raises(ChatError) as caught:
        chat_client(tls_server, max_retries=1).complete(MESSAGES)
    assert str(caught.value) == "[chat_failed] chat endpoint failed after 2 attempts: URLError"


def test_chat_response_over_the_size_cap_is_refused_without_retry(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat, "MAX_RESPONSE_BYTES", 100)
    server.script = [Reply(body=b"x" * 101)]
    with pytest.raises(ChatError) as caught:
        chat_client(server.url).complete(MESSAGES)
    assert (str(caught.value), len(server.seen)) == ("[chat_failed] chat response is too large", 1)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>gateway</html>", "chat response is not an OpenAI chat completion"),
        (b'{"choices": []}', "chat response is not an OpenAI chat completion"),
        (b'{"choices": [{"message": {"content": null}}]}', "chat completion has no text content"),
    ],
)
def test_chat_reply_that_is_not_a_completion_is_a_chat_error(
    server: ScriptedServer, body: bytes, message: str
) -> None:
    server.script = [Reply(body=body)]
    with pytest.raises(ChatError) as caught:
        chat_client(server.url).complete(MESSAGES)
    assert (caught.value.message, len(server.seen)) == (message, 1)


def test_chat_base_url_must_be_http() -> None:
    with pytest.raises(ConfigurationError) as caught:
        OpenAICompatibleChat("ftp://host/v1", "m")
    assert caught.value.message == "chat base_url must be http(s): 'ftp://host/v1'"


# --- embeddings -----------------------------------------------------------------------------


def test_embedder_sends_json_accept_and_its_own_user_agent(server: ScriptedServer) -> None:
    embedder(server.url, []).embed_documents(["a", "b"])
    (seen,) = server.seen
    assert {k: seen.headers[k] for k in ("content-type", "accept", "user-agent")} == {
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": "graphctx-embedder",
    }
    assert seen.headers["authorization"] == f"Bearer {API_KEY}"


def test_embedder_4xx_message_quotes_the_start_of_the_error_body(server: ScriptedServer) -> None:
    server.script = [Reply(status=400, body=b'{"error": "' + b"e" * 400 + b'"}')]
    with pytest.raises(EmbeddingError) as caught:
        embedder(server.url, []).embed_query("q")
    excerpt = ('{"error": "' + "e" * 400)[:300]
    url = server.url + "/embeddings"
    assert caught.value.message == f"openai:embed-model: HTTP 400 from {url}: {excerpt}"
    assert (caught.value.retryable, len(server.seen)) == (False, 1)


def test_embedder_refuses_a_redirect_and_says_to_give_the_final_url(
    server: ScriptedServer, other_server: ScriptedServer
) -> None:
    target = other_server.url + "/embeddings"
    server.script = [Reply(status=302, body=b"moved", headers=(("Location", target),))]
    with pytest.raises(EmbeddingError) as caught:
        embedder(server.url, []).embed_query("q")
    url = server.url + "/embeddings"
    assert caught.value.message == (
        f"openai:embed-model: HTTP 302 from {url}"
        " (redirects are not followed: give the final URL as base_url)"
    )
    assert (caught.value.retryable, other_server.seen) == (False, [])


def test_embedder_gives_up_with_the_attempt_count_and_a_retryable_error(
    server: ScriptedServer,
) -> None:
    server.script = [Reply(status=502, body=b"bad gateway")] * 3
    sleeps: list[float] = []
    with pytest.raises(EmbeddingError) as caught:
        embedder(server.url, sleeps, max_retries=2, backoff_s=1.0, max_backoff_s=1.5).embed_query(
            "q"
        )
    url = server.url + "/embeddings"
    assert caught.value.message == (
        f"openai:embed-model: HTTP 502 from {url}: bad gateway (gave up after 3 attempts)"
    )
    assert caught.value.retryable is True
    assert isinstance(caught.value.__cause__, urllib.error.HTTPError)
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 1.0
    assert 0.75 <= sleeps[1] <= 1.5


def test_embedder_names_an_unreachable_host(server: ScriptedServer) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(EmbeddingError) as caught:
        embedder(url, [], max_retries=0).embed_query("q")
    assert caught.value.message.startswith(f"openai:embed-model: cannot reach {url}/embeddings: ")
    assert caught.value.message.endswith(" (gave up after 1 attempts)")
    assert caught.value.retryable is True


def test_embedder_timeout_is_named_and_retryable(server: ScriptedServer) -> None:
    server.script = [Reply(hang=True)]
    with pytest.raises(EmbeddingError) as caught:
        embedder(server.url, [], timeout_s=0.3, max_retries=0).embed_query("q")
    url = server.url + "/embeddings"
    assert caught.value.message == (
        f"openai:embed-model: request to {url} failed: TimeoutError('timed out')"
        " (gave up after 1 attempts)"
    )
    assert caught.value.retryable is True


def test_embedder_does_not_retry_an_untrusted_certificate(tls_server: str) -> None:
    sleeps: list[float] = []
    with pytest.raises(EmbeddingError) as caught:
        embedder(tls_server, sleeps, max_retries=2).embed_query("q")
    assert caught.value.message.startswith(
        f"openai:embed-model: cannot reach {tls_server}/embeddings: "
        "[SSL: CERTIFICATE_VERIFY_FAILED]"
    )
    assert (caught.value.retryable, sleeps) == (False, [])


def test_embedder_response_over_the_size_cap_is_refused_without_retry(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(openai_compatible, "MAX_RESPONSE_BYTES", 100)
    server.script = [Reply(body=b"x" * 101)]
    with pytest.raises(EmbeddingError) as caught:
        embedder(server.url, []).embed_query("q")
    assert caught.value.message == "openai:embed-model: response exceeds 100 bytes"
    assert (caught.value.retryable, len(server.seen)) == (False, 1)
