"""Optional embedder: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Works with OpenAI, vLLM, llama.cpp, Ollama, LM Studio, text-embeddings-inference, ... through
the standard library only (the shared :mod:`graphctx.llm.transport`). Texts go out in batches;
429, 5xx, timeouts and connection failures are retried a bounded number of times with capped,
jittered exponential backoff (honouring a short ``Retry-After``); everything else, an
untrusted TLS certificate included, fails at once. Every response is validated (one finite
vector per input, indices ``0..n-1``, one dimension throughout) before it reaches the store.
Redirects are refused so the API key is never forwarded to another host; the key never
appears in ``repr``, messages or logs.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import numpy as np

from graphctx.embed.port import Float32Array, normalize_rows, prepare_texts
from graphctx.errors import ConfigurationError, EmbeddingError
from graphctx.llm.transport import (
    BrokenExchange,
    ErrorStatus,
    FailedPost,
    JsonTransport,
    RetryPolicy,
    Unreachable,
)

__all__ = ["OpenAICompatibleEmbedder", "parse_embeddings_response"]

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_BATCH_SIZE = 64
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_S = 0.5
DEFAULT_MAX_BACKOFF_S = 8.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
ERROR_EXCERPT_CHARS = 300


class OpenAICompatibleEmbedder:
    """An ``Embedder`` over an OpenAI-compatible embeddings API. Construction does no I/O;
    when ``dimension`` is not given it is learned from the first response (reading
    ``dimension`` before any embed call sends one short probe request)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimension: int | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        max_backoff_s: float = DEFAULT_MAX_BACKOFF_S,
        query_prefix: str = "",
        document_prefix: str = "",
        name: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._url = _embeddings_url(base_url)
        if not model.strip():
            raise ConfigurationError("embedding model name is empty")
        if api_key is not None and ("\n" in api_key or "\r" in api_key):
            raise ConfigurationError("embedding API key contains a line break")
        if dimension is not None and dimension < 1:
            raise ConfigurationError(f"dimension must be at least 1, got {dimension}")
        if timeout_s <= 0 or batch_size < 1 or max_retries < 0 or min(backoff_s, max_backoff_s) < 0:
            raise ConfigurationError(
                "need timeout_s > 0, batch_size >= 1, max_retries >= 0 and backoffs >= 0"
            )
        self._model = model
        self._dimension = dimension
        self._batch_size = batch_size
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._name = name or f"openai:{model}"
        self._dimension_lock = threading.Lock()
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "graphctx-embedder",
        }
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        retry = RetryPolicy(
            max_retries, backoff_s, max_backoff_s, jitter=True, honour_retry_after=True
        )
        self._transport = JsonTransport(
            self._url,
            headers,
            timeout_s=timeout_s,
            max_response_bytes=MAX_RESPONSE_BYTES,
            retry=retry,
            error_excerpt_bytes=ERROR_EXCERPT_CHARS,
            sleep=sleep,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self._url!r}, model={self._model!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed_query("dimension probe")
        assert self._dimension is not None  # set by the first successful response
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> Float32Array:
        prepared = [self._document_prefix + text for text in prepare_texts(texts)]
        if not prepared:
            return np.empty((0, self.dimension), dtype=np.float32)
        batches = range(0, len(prepared), self._batch_size)
        return np.concatenate(
            [self._embed_batch(prepared[start : start + self._batch_size]) for start in batches]
        )

    def embed_query(self, text: str) -> Float32Array:
        (query,) = prepare_texts([text])
        vector: Float32Array = self._embed_batch([self._query_prefix + query])[0]
        return vector

    def _embed_batch(self, batch: list[str]) -> Float32Array:
        payload: dict[str, object] = {
            "model": self._model,
            "input": batch,
            "encoding_format": "float",
        }
        vectors = parse_embeddings_response(self._post_with_retries(payload), len(batch))
        with self._dimension_lock:
            if self._dimension is None:
                self._dimension = vectors.shape[1]
            elif vectors.shape[1] != self._dimension:
                raise EmbeddingError(
                    f"{self._name} returned {vectors.shape[1]}-dimensional vectors, "
                    f"expected {self._dimension}"
                )
        return vectors

    def _post_with_retries(self, payload: dict[str, object]) -> bytes:
        outcome = self._transport.post(payload)
        if isinstance(outcome, bytes):
            return outcome
        message, cause = self._describe(outcome)
        if outcome.retries_exhausted:
            raise EmbeddingError(
                f"{message} (gave up after {outcome.attempts} attempts)", retryable=True
            ) from cause
        raise EmbeddingError(message) from cause

    def _describe(self, outcome: FailedPost) -> tuple[str, BaseException]:
        failure = outcome.failure
        if isinstance(failure, ErrorStatus):
            message = f"{self._name}: HTTP {failure.status} from {self._url}"
            if 300 <= failure.status < 400:
                message += " (redirects are not followed: give the final URL as base_url)"
            elif failure.excerpt:
                message += f": {failure.excerpt}"
            return message, failure.cause
        if isinstance(failure, Unreachable):
            return f"{self._name}: cannot reach {self._url}: {failure.reason}", failure.cause
        if isinstance(failure, BrokenExchange):
            return f"{self._name}: request to {self._url} failed: {failure.cause!r}", failure.cause
        message = f"{self._name}: response exceeds {failure.limit_bytes} bytes"
        return message, ValueError("response too large")


def parse_embeddings_response(body: bytes, expected_count: int) -> Float32Array:
    """Validate an ``/embeddings`` response body and return its vectors in input order,
    L2-normalised. Anything malformed raises a non-retryable ``EmbeddingError``."""
    try:
        document = json.loads(body)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise EmbeddingError("embeddings response is not valid JSON") from exc
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list) or len(data) != expected_count:
        count = len(data) if isinstance(data, list) else "no"
        raise EmbeddingError(f"embeddings response has {count} items, expected {expected_count}")
    rows: list[list[float] | None] = [None] * expected_count
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < expected_count or rows[index] is not None:
            raise EmbeddingError("embeddings response indices are not 0..n-1, each once")
        if not isinstance(vector, list) or not vector:
            raise EmbeddingError(f"embeddings response item {index} has no embedding list")
        if not all(type(value) in (float, int) for value in vector):
            raise EmbeddingError(f"embeddings response item {index} holds non-numbers")
        rows[index] = vector
    complete = [row for row in rows if row is not None]  # every slot is filled by now
    if len({len(row) for row in complete}) > 1:
        raise EmbeddingError("embeddings response mixes vectors of different dimensions")
    return normalize_rows(complete)


def _embeddings_url(base_url: str) -> str:
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"embedding base URL must be http(s)://host[:port][/path], got {base_url!r}"
        )
    url = base_url.strip().rstrip("/")
    return url if url.endswith("/embeddings") else f"{url}/embeddings"
