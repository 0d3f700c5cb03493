"""Per-key token buckets, in memory: one process. ``graphctx serve --workers N`` shares them
between its workers through :class:`graphctx.server.shared_limits.SqliteTokenBucketLimiter`
(a fleet of machines needs a shared limiter in front)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["RateLimiter", "TokenBucketLimiter"]


class RateLimiter(Protocol):
    """Token buckets by key: ``acquire`` takes one token (0.0, or the seconds until one is
    available); ``available`` tells whether it would succeed and takes nothing."""

    def acquire(self, key: str) -> float: ...

    def available(self, key: str) -> bool: ...


@dataclass
class _Bucket:
    tokens: float
    updated: float


class TokenBucketLimiter:
    """``rate`` tokens per second refill each key's bucket up to ``burst``; a request takes one.

    Not locked: every caller runs on the event loop thread.
    """

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
    ) -> None:
        if rate <= 0 or burst <= 0:
            raise ValueError("rate and burst must be positive")
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: dict[str, _Bucket] = {}

    def acquire(self, key: str) -> float:
        """Take a token: 0.0 when allowed, else the seconds until one is available."""
        bucket = self._refill(key)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self._rate

    def available(self, key: str) -> bool:
        """True when ``acquire`` would succeed; takes nothing."""
        return self._refill(key).tokens >= 1.0

    def _refill(self, key: str) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._max_keys:
                self._buckets.clear()  # bounded memory; a reset only ever grants a fresh burst
            bucket = self._buckets[key] = _Bucket(self._burst, now)
        else:
            bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.updated) * self._rate)
            bucket.updated = now
        return bucket
