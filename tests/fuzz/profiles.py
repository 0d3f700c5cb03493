"""Fuzzing budgets, chosen by ``GRAPHCTX_FUZZ_PROFILE`` (``ci``, the default, or ``long``).

One profile sets everything that bounds a fuzz run: how many examples hypothesis tries, the
per-example deadline, how long one call into a possibly looping target may take before it
counts as a hang, and each test's wall-clock budget. ``ci`` keeps the whole ``tests/fuzz``
folder near two minutes on a shared two-core machine; ``long`` is for a night run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "PROFILE_ENV", "FuzzProfile", "fuzz_settings"]

PROFILE_ENV = "GRAPHCTX_FUZZ_PROFILE"


@dataclass(frozen=True)
class FuzzProfile:
    name: str
    max_examples: int
    deadline_ms: int  # one example, measured by hypothesis
    hang_timeout_s: float  # one call into a target running in the bounded worker
    test_budget_s: float  # one whole test, shrinking included; a hard stop at three times it


PROFILES = {
    "ci": FuzzProfile("ci", max_examples=300, deadline_ms=5_000, hang_timeout_s=10.0,
                      test_budget_s=30.0),
    "long": FuzzProfile("long", max_examples=20_000, deadline_ms=10_000, hang_timeout_s=30.0,
                        test_budget_s=3_600.0),
}  # fmt: skip


def _selected() -> FuzzProfile:
    name = os.environ.get(PROFILE_ENV, "ci")
    if name not in PROFILES:
        raise RuntimeError(f"{PROFILE_ENV}={name!r}: choose one of {', '.join(PROFILES)}")
    return PROFILES[name]


PROFILE = _selected()


def fuzz_settings(share: float = 1.0) -> settings:
    """Hypothesis settings of the selected profile; ``share`` scales the example count for
    targets whose single example costs much more than the others (an HTTP round trip)."""
    return settings(
        max_examples=max(10, int(PROFILE.max_examples * share)),
        deadline=timedelta(milliseconds=PROFILE.deadline_ms),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
