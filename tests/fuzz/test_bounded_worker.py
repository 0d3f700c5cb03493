"""The hang detection itself: a target stuck in C code is stopped, and the next call works."""

from __future__ import annotations

import time

import fuzz_targets
import pytest
from bounded import BoundedWorker, HangError, Raised


def test_a_stuck_target_is_reported_as_a_hang_and_the_worker_recovers() -> None:
    worker = BoundedWorker(timeout_s=60.0)
    try:
        worker.call(fuzz_targets.warm_up)
        worker.timeout_s = 1.0
        started = time.monotonic()
        with pytest.raises(HangError, match="backtrack"):
            worker.call(fuzz_targets.backtrack, 64)  # 2**64 steps: never returns
        assert time.monotonic() - started < 10.0
        worker.timeout_s = 60.0
        assert worker.call(fuzz_targets.backtrack, 8) is False
    finally:
        worker.close()


def test_an_exception_comes_back_as_data_with_its_code() -> None:
    worker = BoundedWorker(timeout_s=60.0)
    try:
        raised = worker.call(fuzz_targets.split_markdown, "---\nscopes: [\n---\nbody")
    finally:
        worker.close()
    assert isinstance(raised, Raised)
    assert (raised.type_name, raised.code, raised.is_caller_error) == (
        "graphctx.errors.InvalidDocumentError",
        "front_matter_invalid",
        True,
    )
