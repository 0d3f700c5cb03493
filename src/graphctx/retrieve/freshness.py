"""Freshness: current, stale or unknown — and the freshness_required_at filter."""

from __future__ import annotations

from datetime import datetime

from graphctx.contract import Freshness
from graphctx.store.records import ChunkView


def classify_freshness(view: ChunkView, now: datetime) -> Freshness:
    """Stale: superseded, expired or not yet valid. Unknown: no source timestamp at all."""
    dates = view.dates
    if view.superseded:
        return Freshness.STALE
    if dates.valid_to is not None and dates.valid_to <= now:
        return Freshness.STALE
    if dates.valid_from is not None and dates.valid_from > now:
        return Freshness.STALE
    if dates.updated_at is None and dates.created_at is None and dates.valid_from is None:
        return Freshness.UNKNOWN
    return Freshness.CURRENT


def last_changed(view: ChunkView) -> datetime | None:
    candidates = [d for d in (view.dates.updated_at, view.dates.created_at) if d is not None]
    return max(candidates) if candidates else view.dates.valid_from


def meets_requirement(view: ChunkView, freshness: Freshness, required_at: datetime | None) -> bool:
    """With ``freshness_required_at``, only non-stale evidence changed at or after it passes."""
    if required_at is None:
        return True
    changed = last_changed(view)
    return freshness is not Freshness.STALE and changed is not None and changed >= required_at
