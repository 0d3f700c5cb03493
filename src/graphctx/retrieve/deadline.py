"""A request deadline, sliced per stage, and the one way a stage waits on the store.

Every stage gets a monotonic deadline (a share of what is left) and passes it to the store,
which aborts its own query there (SQLite: a progress handler; Neo4j: the transaction
timeout). The store cannot always honour it: a worker thread blocked on a slow disk or a
driver waiting on a dead socket does not look at the clock. :func:`within` therefore bounds
the *waiting* as well: past the deadline the awaiting task is cancelled and the work is
abandoned (a worker thread finishes on its own and its result is dropped), never awaited.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from graphctx.store.port import StageTimeout

__all__ = [
    "CANDIDATE_SHARE",
    "EXPANSION_SHARE",
    "GATE_MIN_S",
    "GATE_RESERVE_SHARE",
    "Deadline",
    "within",
]

T = TypeVar("T")

# Share of the whole request budget each stage may use at most (of what is left).
CANDIDATE_SHARE = 0.6
EXPANSION_SHARE = 0.5
# The output gate must run before any item leaves: fetch stops this share of the whole
# timeout early so the gate has time of its own, and the gate always gets GATE_MIN_S even
# when an earlier stage finished right at the deadline.
GATE_RESERVE_SHARE = 0.1
GATE_MIN_S = 0.05


@dataclass
class Deadline:
    timeout_ms: int
    started: float = field(default_factory=time.monotonic)

    @property
    def at(self) -> float:
        return self.started + self.timeout_ms / 1000

    def remaining_s(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def slice_at(self, share: float) -> float:
        """A monotonic deadline for a stage that may use ``share`` of the remaining time."""
        return time.monotonic() + self.remaining_s() * share

    def fetch_at(self) -> float:
        """Where fetch must stop so the output gate keeps its reserve."""
        return self.at - self.timeout_ms / 1000 * GATE_RESERVE_SHARE

    def gate_at(self) -> float:
        """The output gate's deadline: the request's, but never less than GATE_MIN_S away."""
        return max(self.at, time.monotonic() + GATE_MIN_S)


async def within(deadline_at: float, work: Awaitable[T]) -> T:
    """``await work``, but never past ``deadline_at``: then it is abandoned, StageTimeout raised.

    Cancelling a task that awaits ``asyncio.to_thread`` returns at once (the thread keeps
    running and its result is discarded), so a store call stuck in a worker thread costs
    the request nothing past its deadline.
    """
    try:
        async with asyncio.timeout(max(0.0, deadline_at - time.monotonic())):
            return await work
    except TimeoutError as exc:
        raise StageTimeout("abandoned at the deadline") from exc
