"""A request deadline, sliced per stage."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# Share of the whole request budget each stage may use at most (of what is left).
CANDIDATE_SHARE = 0.6
EXPANSION_SHARE = 0.5


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
