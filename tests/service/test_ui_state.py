"""The explorer's URL state: any state survives a trip through its query string."""

from __future__ import annotations

from datetime import UTC, date, datetime
from urllib.parse import parse_qs

from hypothesis import given
from hypothesis import strategies as st

from graphctx.contract import RetrievalMode
from graphctx.server.ui.state import SearchState, parse_state

NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,20}", fullmatch=True)
STATES = st.builds(
    SearchState,
    project=st.none() | st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True),
    query=st.text(max_size=200),
    mode=st.sampled_from(RetrievalMode),
    scopes=st.lists(NAMES, unique=True, max_size=5).map(lambda s: tuple(sorted(s))),
    max_tokens=st.integers(1, 200_000),
    timeout_ms=st.integers(1, 120_000),
    fresh_since=st.none() | st.dates(date(2000, 1, 1), date(2100, 1, 1)),
    compare_as=st.none() | NAMES,
)


@given(STATES)
def test_every_state_round_trips_through_its_query_string(state: SearchState) -> None:
    parsed = parse_state(parse_qs(state.to_query(), keep_blank_values=True))
    assert parsed == state
    assert parsed.notices == ()


def test_a_hand_edited_link_still_opens_with_defaults_and_says_what_it_ignored() -> None:
    state = parse_state(
        {
            "project": ["../beta"],
            "q": ["rollback"],
            "mode": ["telepathy"],
            "scope": ["public", "bad scope"],
            "max_tokens": ["-5"],
            "timeout_ms": ["soon"],
            "fresh_since": ["yesterday"],
        }
    )
    assert state == SearchState(query="rollback", scopes=("public",))
    assert len(state.notices) == 5


def test_the_freshness_date_asks_for_evidence_changed_since_midnight_utc() -> None:
    state = SearchState(project="alpha", query="q", fresh_since=date(2026, 11, 1))
    request = state.request_for("rita", ["public"], "trace-1")
    assert request.freshness_required_at == datetime(2026, 11, 1, tzinfo=UTC)
    assert request.namespace == "alpha"
    assert request.allowed_scopes == ["public"]
