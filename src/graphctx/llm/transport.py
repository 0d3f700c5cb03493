"""The one HTTP transport of the OpenAI-compatible clients (chat completions, embeddings).

Standard library only. A JSON body is POSTed to one URL; redirects are refused (an API key in
the headers never reaches another host), the response is read up to a size cap, every attempt
has a timeout, and a failure that another attempt may cure (429, 5xx, timeouts, resets,
connection failures) is retried a bounded number of times with capped exponential backoff.
The transport returns the body or a :class:`FailedPost`; each client turns that into its own
error type and message and parses the body itself.
"""

from __future__ import annotations

import json
import random
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from http.client import HTTPException

__all__ = [
    "BrokenExchange",
    "ErrorStatus",
    "FailedPost",
    "Failure",
    "JsonTransport",
    "ResponseTooLarge",
    "RetryPolicy",
    "Unreachable",
]


@dataclass(frozen=True)
class ErrorStatus:
    """The server answered with an error status; a redirect is one too (never followed)."""

    status: int
    excerpt: str  # the start of the error body, when the client asked for one
    retry_after_s: float | None  # a numeric ``Retry-After`` header
    cause: urllib.error.HTTPError


@dataclass(frozen=True)
class Unreachable:
    """No HTTP exchange took place: name resolution, connection or TLS handshake failed."""

    cause: urllib.error.URLError

    @property
    def reason(self) -> object:
        return self.cause.reason

    @property
    def certificate_rejected(self) -> bool:
        return isinstance(self.cause.reason, ssl.SSLCertVerificationError)


@dataclass(frozen=True)
class BrokenExchange:
    """The exchange started and broke: a timeout, a reset, a truncated response."""

    cause: OSError | HTTPException


@dataclass(frozen=True)
class ResponseTooLarge:
    limit_bytes: int


Failure = ErrorStatus | Unreachable | BrokenExchange | ResponseTooLarge


@dataclass(frozen=True)
class FailedPost:
    """The last failure, how many attempts were made, and whether they ran out (the failure
    was retryable) or the first non-retryable failure ended them."""

    failure: Failure
    attempts: int
    retries_exhausted: bool


@dataclass(frozen=True)
class RetryPolicy:
    """Which failures are retried and how long to wait before the next attempt."""

    max_retries: int
    backoff_s: float  # the first delay; each further delay doubles, up to max_backoff_s
    max_backoff_s: float
    jitter: bool  # spread each delay over [delay / 2, delay], so concurrent clients part
    honour_retry_after: bool  # a Retry-After header sets the delay (still capped)
    retry_untrusted_certificates: bool = False

    def retryable(self, failure: Failure) -> bool:
        if isinstance(failure, ErrorStatus):
            return failure.status == 429 or failure.status >= 500
        if isinstance(failure, Unreachable):
            return self.retry_untrusted_certificates or not failure.certificate_rejected
        return isinstance(failure, BrokenExchange)

    def delay_s(self, failed_attempt: int, failure: Failure) -> float:
        """The wait after attempt ``failed_attempt`` (0-based) failed with ``failure``."""
        retry_after_s = failure.retry_after_s if isinstance(failure, ErrorStatus) else None
        if self.honour_retry_after and retry_after_s is not None:
            return min(retry_after_s, self.max_backoff_s)
        delay: float = min(self.backoff_s * 2.0**failed_attempt, self.max_backoff_s)
        return delay * random.uniform(0.5, 1.0) if self.jitter else delay


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class JsonTransport:
    """POSTs JSON bodies to ``url`` under ``retry``. Construction does no I/O."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        timeout_s: float,
        max_response_bytes: int,
        retry: RetryPolicy,
        error_excerpt_bytes: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._url = url
        self._headers = dict(headers)
        self._timeout_s = timeout_s
        self._max_response_bytes = max_response_bytes
        self._retry = retry
        self._error_excerpt_bytes = error_excerpt_bytes
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_RefuseRedirects())

    def post(self, payload: Mapping[str, object]) -> bytes | FailedPost:
        """The response body of the first successful attempt, or how the attempts ended."""
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        attempts = self._retry.max_retries + 1
        for attempt in range(attempts):
            outcome = self._post_once(data)
            if isinstance(outcome, bytes):
                return outcome
            if not self._retry.retryable(outcome):
                return FailedPost(outcome, attempt + 1, retries_exhausted=False)
            if attempt + 1 == attempts:
                return FailedPost(outcome, attempts, retries_exhausted=True)
            self._sleep(self._retry.delay_s(attempt, outcome))
        raise AssertionError("unreachable")  # pragma: no cover

    def _post_once(self, data: bytes) -> bytes | Failure:
        request = urllib.request.Request(self._url, data=data, headers=self._headers, method="POST")
        try:
            with self._opener.open(request, timeout=self._timeout_s) as response:
                body: bytes = response.read(self._max_response_bytes + 1)
        except urllib.error.HTTPError as exc:
            return self._error_status(exc)
        except urllib.error.URLError as exc:
            return Unreachable(exc)
        except (OSError, HTTPException) as exc:  # timeouts, resets, truncated responses
            return BrokenExchange(exc)
        if len(body) > self._max_response_bytes:
            return ResponseTooLarge(self._max_response_bytes)
        return body

    def _error_status(self, exc: urllib.error.HTTPError) -> ErrorStatus:
        excerpt = ""
        try:
            if self._error_excerpt_bytes:
                excerpt = exc.read(self._error_excerpt_bytes).decode("utf-8", "replace")
        except (OSError, HTTPException):
            excerpt = ""
        finally:
            exc.close()
        return ErrorStatus(exc.code, excerpt, _retry_after_s(exc.headers), exc)


def _retry_after_s(headers: Message | None) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:  # an HTTP date: fall back to our own backoff
        return None
