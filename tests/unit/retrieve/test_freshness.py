from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graphctx.contract import Freshness
from graphctx.retrieve.freshness import classify_freshness, meets_requirement
from graphctx.store.records import ChunkView, DocumentDates

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def view(*, superseded: bool = False, **dates: datetime) -> ChunkView:
    return ChunkView(
        chunk_id="d@1#0",
        document_id="d",
        document_version="1",
        source_uri="x://d",
        title=None,
        text="t",
        start_char=0,
        end_char=1,
        ordinal=0,
        scopes=frozenset({"e"}),
        dates=DocumentDates(**dates),
        superseded=superseded,
        superseded_by=None,
    )


def test_a_superseded_document_is_stale_even_when_recently_updated() -> None:
    assert classify_freshness(view(superseded=True, updated_at=NOW), NOW) is Freshness.STALE


def test_an_expired_document_is_stale() -> None:
    expired = view(updated_at=NOW - timedelta(days=400), valid_to=NOW - timedelta(days=1))
    assert classify_freshness(expired, NOW) is Freshness.STALE


def test_a_document_not_yet_in_force_is_not_current() -> None:
    future = view(updated_at=NOW, valid_from=NOW + timedelta(days=30))
    assert classify_freshness(future, NOW) is Freshness.STALE


def test_a_document_without_source_timestamps_is_unknown() -> None:
    assert classify_freshness(view(), NOW) is Freshness.UNKNOWN


def test_a_dated_valid_document_is_current() -> None:
    assert classify_freshness(view(created_at=NOW - timedelta(days=3)), NOW) is Freshness.CURRENT


def test_freshness_requirement_keeps_only_evidence_changed_since_then() -> None:
    required = NOW - timedelta(days=10)
    recent = view(updated_at=NOW - timedelta(days=1))
    old = view(updated_at=NOW - timedelta(days=100))
    assert meets_requirement(recent, Freshness.CURRENT, required)
    assert not meets_requirement(old, Freshness.CURRENT, required)
    assert not meets_requirement(view(), Freshness.UNKNOWN, required)
    assert not meets_requirement(recent, Freshness.STALE, required)
    assert meets_requirement(old, Freshness.CURRENT, None)
