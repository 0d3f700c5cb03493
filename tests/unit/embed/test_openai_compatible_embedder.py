from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from graphctx.embed import OpenAICompatibleEmbedder
from graphctx.embed.openai_compatible import parse_embeddings_response
from graphctx.errors import ConfigurationError, EmbeddingError

API_KEY = "sk-test-secret-123"


@dataclass(frozen=True)
class Reply:
    """One scripted answer; ``body=None`` means canned vectors for the request's inputs."""

    status: int = 200
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()
    hang: bool = False


@dataclass
class FakeEmbeddingsServer:
    """A real HTTP server on 127.0.0.1 speaking the ``/embeddings`` protocol."""

    url: str = ""
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, object]] = field(default_factory=list)
    auth_headers: list[str | None] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def next_reply(self) -> Reply:
        return self.script.pop(0) if self.script else Reply()


def canned_vector(text: str) -> list[float]:
    """Deterministic, deliberately unnormalised 3-d vector."""
    return [float(len(text)), 1.0, 2.0]


def _handler_for(server: FakeEmbeddingsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            server.requests.append({"path": self.path, **payload})
            server.auth_headers.append(self.headers.get("Authorization"))
            reply = server.next_reply()
            if reply.hang:
                server.release.wait(timeout=10)
                return
            body = reply.body
            if body is None:
                items = [
                    {"object": "embedding", "index": i, "embedding": canned_vector(text)}
                    for i, text in enumerate(payload["input"])
                ]
                body = json.dumps({"object": "list", "data": items[::-1]}).encode()
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingsServer]:
    fake = FakeEmbeddingsServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(fake))
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield fake
    fake.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


@pytest.fixture
def sleeps() -> list[float]:
    return []


def make_embedder(
    server: FakeEmbeddingsServer, sleeps: list[float], **options: object
) -> OpenAICompatibleEmbedder:
    settings: dict[str, object] = {"api_key": API_KEY, "sleep": sleeps.append, "timeout_s": 5.0}
    settings.update(options)
    return OpenAICompatibleEmbedder(server.url, "test-model", **settings)  # type: ignore[arg-type]


def test_documents_come_back_in_input_order_normalised_with_learned_dimension(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    texts = ["a", "bbbb", "부당해고"]
    vectors = make_embedder(server, sleeps).embed_documents(texts)
    expected = np.array([canned_vector(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert (vectors.shape, vectors.dtype.name) == ((3, 3), "float32")
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert server.requests == [
        {
            "path": "/v1/embeddings",
            "model": "test-model",
            "input": texts,
            "encoding_format": "float",
        }
    ]


def test_dimension_is_discovered_from_the_first_response(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    embedder = make_embedder(server, sleeps)
    query = embedder.embed_query("q")
    assert (query.shape, embedder.dimension, len(server.requests)) == ((3,), 3, 1)


def test_inputs_are_sent_in_batches_of_batch_size(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    vectors = make_embedder(server, sleeps, batch_size=2).embed_documents(list("abcde"))
    assert vectors.shape == (5, 3)
    assert [request["input"] for request in server.requests] == [["a", "b"], ["c", "d"], ["e"]]


def test_empty_input_with_a_known_dimension_sends_no_request(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    vectors = make_embedder(server, sleeps, dimension=3).embed_documents([])
    assert (vectors.shape, server.requests) == ((0, 3), [])


def test_a_configured_dimension_that_the_server_contradicts_is_not_retried(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    with pytest.raises(EmbeddingError) as caught:
        make_embedder(server, sleeps, dimension=768).embed_query("q")
    assert (caught.value.retryable, len(server.requests)) == (False, 1)


def test_a_503_is_retried_with_backoff_then_succeeds(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    server.script = [Reply(status=503, body=b'{"error": "overloaded"}')]
    vectors = make_embedder(server, sleeps, backoff_s=0.5).embed_documents(["a"])
    assert (vectors.shape, len(server.requests), len(sleeps)) == ((1, 3), 2, 1)
    assert 0.25 <= sleeps[0] <= 0.5


def test_a_429_retry_after_header_sets_the_delay_within_the_cap(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    server.script = [
        Reply(status=429, body=b"{}", headers=(("Retry-After", "2"),)),
        Reply(status=429, body=b"{}", headers=(("Retry-After", "120"),)),
    ]
    make_embedder(server, sleeps, max_backoff_s=8.0).embed_query("q")
    assert sleeps == [2.0, 8.0]


def test_a_401_fails_at_once_without_leaking_the_api_key(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    server.script = [Reply(status=401, body=b'{"error": {"message": "bad key"}}')]
    embedder = make_embedder(server, sleeps)
    with pytest.raises(EmbeddingError) as caught:
        embedder.embed_query("q")
    assert (caught.value.retryable, len(server.requests), sleeps) == (False, 1, [])
    assert "HTTP 401" in str(caught.value)
    assert server.auth_headers == [f"Bearer {API_KEY}"]
    assert API_KEY not in str(caught.value) + repr(embedder)


def test_persistent_5xx_gives_up_after_max_retries_with_a_retryable_error(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    server.script = [Reply(status=500, body=b"{}")] * 3
    with pytest.raises(EmbeddingError) as caught:
        make_embedder(server, sleeps, max_retries=2).embed_query("q")
    assert (caught.value.retryable, len(server.requests), len(sleeps)) == (True, 3, 2)


def test_malformed_json_is_a_non_retryable_error(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    server.script = [Reply(body=b"<html>gateway</html>")]
    with pytest.raises(EmbeddingError) as caught:
        make_embedder(server, sleeps).embed_query("q")
    assert (caught.value.retryable, len(server.requests)) == (False, 1)


def test_a_redirect_is_refused_so_the_key_never_travels(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    server.script = [Reply(status=307, body=b"", headers=(("Location", "http://example.com/"),))]
    with pytest.raises(EmbeddingError) as caught:
        make_embedder(server, sleeps).embed_query("q")
    assert (caught.value.retryable, len(server.requests)) == (False, 1)


def test_a_server_slower_than_the_timeout_is_a_retryable_error(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    server.script = [Reply(hang=True)]
    with pytest.raises(EmbeddingError) as caught:
        make_embedder(server, sleeps, timeout_s=0.2, max_retries=0).embed_query("q")
    assert caught.value.retryable is True


def test_connection_refused_is_a_retryable_error(sleeps: list[float]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAICompatibleEmbedder(
        f"http://127.0.0.1:{port}/v1", "m", max_retries=1, sleep=sleeps.append
    )
    with pytest.raises(EmbeddingError) as caught:
        embedder.embed_query("q")
    assert (caught.value.retryable, len(sleeps)) == (True, 1)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b'{"data": [{"index": 0, "embedding": [1, 2]}]}', "wrong count"),
        (b'{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]}', "dup"),
        (b'{"data": [{"index": 0, "embedding": [1]}, {"index": 1, "embedding": [1, 2]}]}', "dims"),
        (b'{"data": [{"index": 0, "embedding": [1]}, {"index": 2, "embedding": [1]}]}', "range"),
        (b'{"data": [{"index": 0, "embedding": ["1"]}, {"index": 1, "embedding": [1]}]}', "str"),
        (b'{"data": [{"index": 0, "embedding": [NaN]}, {"index": 1, "embedding": [1]}]}', "nan"),
        (b'{"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": []}]}', "empty"),
        (b'{"data": [{"index": 0, "embedding": [true]}, {"index": 1, "embedding": [1]}]}', "bool"),
        (b'{"error": "nope"}', "no data"),
        (b"[]", "not an object"),
    ],
)
def test_a_malformed_response_body_is_rejected(body: bytes, problem: str) -> None:
    with pytest.raises(EmbeddingError) as caught:
        parse_embeddings_response(body, expected_count=2)
    assert caught.value.retryable is False


@pytest.mark.parametrize("base_url", ["", "localhost:8080", "ftp://host/v1", "http://"], ids=repr)
def test_a_base_url_that_is_not_http_is_a_configuration_error(base_url: str) -> None:
    with pytest.raises(ConfigurationError):
        OpenAICompatibleEmbedder(base_url, "m")


def test_a_full_embeddings_url_is_accepted_as_the_base_url(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    embedder = OpenAICompatibleEmbedder(server.url + "/embeddings/", "m", sleep=sleeps.append)
    embedder.embed_query("q")
    assert server.requests[0]["path"] == "/v1/embeddings"


def test_a_query_with_a_lone_surrogate_is_still_sent_as_valid_utf8(
    server: FakeEmbeddingsServer, sleeps: list[float]
) -> None:
    make_embedder(server, sleeps).embed_query("a\udcffb")
    assert server.requests[0]["input"] == ["a?b"]
