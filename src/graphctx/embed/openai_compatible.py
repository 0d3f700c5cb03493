"""Optional embedder: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Works with OpenAI, vLLM, llama.cpp, Ollama, LM Studio, text-embeddings-inference, ... through
the standard library only. Texts go out in batches; 429, 5xx, timeouts and connection failures
are retried a bounded number of times with capped exponential backoff (honouring a short
``Retry-After``); everything else fails at once. Every response is validated (one finite
vector per input, indices ``0..n-1``, one dimension throughout) before it reaches the store.
Redirects are refused so the API key is never forwarded to another host; the key never
appears in ``repr``, messages or logs.
"""

from __future__ import annotations

import json
import random
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import Message
from http.client import HTTPException
from urllib.parse import urlsplit

import numpy as np

from graphctx.embed.port import Float32Array, normalize_rows, prepare_texts
from graphctx.errors import ConfigurationError, EmbeddingError

__all__ = ["OpenAICompatibleEmbedder", "parse_embeddings_response"]

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_BATCH_SIZE = 64
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_S = 0.5
DEFAULT_MAX_BACKOFF_S = 8.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
ERROR_EXCERPT_CHARS = 300


@dataclass(frozen=True)
class _Failure:
    error: EmbeddingError
    cause: BaseException
    retry_after_s: float | None = None


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


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
        self._api_key = api_key
        self._dimension = dimension
        self._timeout_s = timeout_s
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._name = name or f"openai:{model}"
        self._sleep = sleep
        self._dimension_lock = threading.Lock()
        self._opener = urllib.request.build_opener(_RefuseRedirects())

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
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        for attempt in range(self._max_retries + 1):
            outcome = self._post_once(data)
            if isinstance(outcome, bytes):
                return outcome
            if not outcome.error.retryable:
                raise outcome.error from outcome.cause
            if attempt == self._max_retries:
                raise EmbeddingError(
                    f"{outcome.error.message} (gave up after {attempt + 1} attempts)",
                    retryable=True,
                ) from outcome.cause
            self._sleep(self._backoff_delay_s(attempt, outcome.retry_after_s))
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff_delay_s(self, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(retry_after_s, self._max_backoff_s)
        ceiling: float = min(self._backoff_s * 2.0**attempt, self._max_backoff_s)
        return ceiling * random.uniform(0.5, 1.0)  # jitter spreads out concurrent clients

    def _post_once(self, data: bytes) -> bytes | _Failure:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "graphctx-embedder",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self._url, data=data, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=self._timeout_s) as response:
                body: bytes = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            return self._http_failure(exc)
        except urllib.error.URLError as exc:
            reason = exc.reason
            retryable = not isinstance(reason, ssl.SSLCertVerificationError)
            message = f"{self._name}: cannot reach {self._url}: {reason}"
            return _Failure(EmbeddingError(message, retryable=retryable), exc)
        except (OSError, HTTPException) as exc:  # timeouts, resets, truncated responses
            message = f"{self._name}: request to {self._url} failed: {exc!r}"
            return _Failure(EmbeddingError(message, retryable=True), exc)
        if len(body) > MAX_RESPONSE_BYTES:
            error = EmbeddingError(f"{self._name}: response exceeds {MAX_RESPONSE_BYTES} bytes")
            return _Failure(error, ValueError("response too large"))
        return body

    def _http_failure(self, exc: urllib.error.HTTPError) -> _Failure:
        status = exc.code
        retryable = status == 429 or status >= 500
        try:
            excerpt = exc.read(ERROR_EXCERPT_CHARS).decode("utf-8", "replace")
        except (OSError, HTTPException):
            excerpt = ""
        finally:
            exc.close()
        message = f"{self._name}: HTTP {status} from {self._url}"
        if 300 <= status < 400:
            message += " (redirects are not followed: give the final URL as base_url)"
        elif excerpt:
            message += f": {excerpt}"
        error = EmbeddingError(message, retryable=retryable)
        return _Failure(error, exc, _retry_after_s(exc.headers) if retryable else None)


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


def _retry_after_s(headers: Message) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:  # an HTTP date: fall back to our own backoff
        return None
