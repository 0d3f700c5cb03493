"""Fuzz tests: every test here is marked ``fuzz`` and bounded by the selected profile.

The bound is enforced twice: a test that runs over its budget fails (after the fact), and a
test that runs over three times its budget (a hang outside the bounded worker) dumps every
thread's stack and ends the process, so CI never waits on a stuck fuzz run.
"""

from __future__ import annotations

import faulthandler
import sys
import time
from collections.abc import Iterator

import fuzz_targets
import pytest
from bounded import BoundedWorker
from profiles import PROFILE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/fuzz/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.fuzz)


@pytest.fixture(autouse=True)
def wall_clock_budget() -> Iterator[None]:
    started = time.monotonic()
    faulthandler.dump_traceback_later(PROFILE.test_budget_s * 3, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
    elapsed = time.monotonic() - started
    assert elapsed <= PROFILE.test_budget_s, (
        f"ran {elapsed:.1f} s, over the {PROFILE.name} profile's {PROFILE.test_budget_s} s"
    )


@pytest.fixture(scope="session")
def worker() -> Iterator[BoundedWorker]:
    bounded = BoundedWorker(PROFILE.hang_timeout_s)
    bounded.timeout_s = 120.0  # the first call imports graphctx in a fresh interpreter
    bounded.call(fuzz_targets.warm_up)
    bounded.timeout_s = PROFILE.hang_timeout_s
    yield bounded
    bounded.close()
