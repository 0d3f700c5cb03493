"""Timings a remote caller sees: coarse buckets, exact values only in logs and metrics.

A stage's time grows with the work the store does for it, and part of that work is on
documents the caller cannot see (hidden chunks of its own project share the full-text
index). Exact per-stage milliseconds in a response would turn that into a measurement, so
the service rounds every duration in the response down to ``TIMING_BUCKET_MS`` after it has
logged the exact values (``graphctx.timings``, one record per retrieval) and fed them to
``/metrics``. The caller can still time the whole request itself; see docs/security.md.
"""

from __future__ import annotations

import logging
from typing import Final

from graphctx.contract import ContextResponse

__all__ = ["TIMING_BUCKET_MS", "coarsen_timings", "log_timings"]

TIMING_BUCKET_MS: Final = 10
_LOG = logging.getLogger("graphctx.timings")


def _bucket(ms: int) -> int:
    return ms - ms % TIMING_BUCKET_MS


def coarsen_timings(response: ContextResponse) -> ContextResponse:
    """``response`` with stage times, stage budgets and the total rounded down to the bucket."""
    stages = [
        stage.model_copy(
            update={
                "elapsed_ms": _bucket(stage.elapsed_ms),
                "budget_ms": None if stage.budget_ms is None else _bucket(stage.budget_ms),
            }
        )
        for stage in response.manifest.stages
    ]
    return response.model_copy(
        update={
            "limits": response.limits.model_copy(
                update={"elapsed_ms": _bucket(response.limits.elapsed_ms)}
            ),
            "manifest": response.manifest.model_copy(update={"stages": stages}),
        }
    )


def log_timings(response: ContextResponse, face: str) -> None:
    """One INFO record with the exact timings the response will no longer carry."""
    _LOG.info(
        "retrieval timings",
        extra={
            "trace_id": response.trace_id,
            "face": face,
            "elapsed_ms": response.limits.elapsed_ms,
            "stages": [
                {"stage": s.stage, "elapsed_ms": s.elapsed_ms, "budget_ms": s.budget_ms}
                for s in response.manifest.stages
            ],
        },
    )
