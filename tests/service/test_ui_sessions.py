"""Explorer sessions: random ids kept only as digests, idle and absolute expiry, revocation.

Every test runs on the in-process store and on the one the workers of a multi-worker
service share (SQLite), which must behave the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.server.auth import Identity, ProjectGrant, Via
from graphctx.server.ui.sessions import (
    IDLE_TIMEOUT_S,
    MAX_AGE_S,
    Sessions,
    SessionStore,
    new_login_token,
    tokens_match,
)
from graphctx.server.ui.shared_sessions import SharedSessionStore

RITA = Identity("rita", "key:rita", Via.API_KEY, {"alpha": ProjectGrant(frozenset({"public"}))})


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["in-process", "shared"])
def store(request: pytest.FixtureRequest, clock: Clock, tmp_path: Path) -> Sessions:
    if request.param == "shared":
        return SharedSessionStore(tmp_path / "shared.sqlite", clock)
    return SessionStore(clock)


def test_a_session_made_by_one_worker_resolves_in_another(clock: Clock, tmp_path: Path) -> None:
    made_by, asked = (SharedSessionStore(tmp_path / "shared.sqlite", clock) for _ in range(2))
    session = made_by.create(RITA)
    resolved = asked.resolve(session.session_id)
    assert resolved is not None
    assert resolved.identity == RITA
    asked.revoke(session.session_id)
    assert made_by.resolve(session.session_id) is None


def test_a_new_session_resolves_to_the_identity_that_signed_in(store: Sessions) -> None:
    session = store.create(RITA)
    resolved = store.resolve(session.session_id)
    assert resolved is not None
    assert resolved.identity == RITA
    assert resolved.csrf_token == session.csrf_token
    assert resolved.session_id == ""  # the id is handed out once, at creation


def test_session_ids_and_csrf_tokens_are_random_and_distinct(store: Sessions) -> None:
    sessions = [store.create(RITA) for _ in range(50)]
    ids = {s.session_id for s in sessions}
    tokens = {s.csrf_token for s in sessions}
    assert len(ids) == len(tokens) == 50
    assert not ids & tokens
    assert all(len(s.session_id) >= 43 for s in sessions)  # 32 random bytes


def test_the_store_keeps_no_usable_session_id(store: Sessions) -> None:
    session = store.create(RITA)
    assert session.session_id not in repr(vars(store))


def test_an_unknown_or_missing_id_resolves_to_nothing(store: Sessions) -> None:
    store.create(RITA)
    assert store.resolve(None) is None
    assert store.resolve("") is None
    assert store.resolve("forged-session-id") is None


def test_a_session_idle_too_long_expires_and_is_forgotten(store: Sessions, clock: Clock) -> None:
    session = store.create(RITA)
    clock.now += IDLE_TIMEOUT_S - 1
    assert store.resolve(session.session_id) is not None  # use keeps it alive
    clock.now += IDLE_TIMEOUT_S - 1
    assert store.resolve(session.session_id) is not None
    clock.now += IDLE_TIMEOUT_S + 1
    assert store.resolve(session.session_id) is None
    assert len(store) == 0


def test_a_session_in_constant_use_still_ends_at_its_maximum_age(
    store: Sessions, clock: Clock
) -> None:
    session = store.create(RITA)
    while clock.now + IDLE_TIMEOUT_S / 2 <= 1_000.0 + MAX_AGE_S:
        clock.now += IDLE_TIMEOUT_S / 2
        assert store.resolve(session.session_id) is not None
    clock.now += IDLE_TIMEOUT_S / 2
    assert store.resolve(session.session_id) is None


def test_logout_revokes_only_that_session(store: Sessions) -> None:
    first, second = store.create(RITA), store.create(RITA)
    store.revoke(first.session_id)
    assert store.resolve(first.session_id) is None
    assert store.resolve(second.session_id) is not None


def test_tokens_match_only_when_both_are_present_and_equal() -> None:
    token = new_login_token()
    assert tokens_match(token, token)
    assert not tokens_match(token, token[:-1] + ("A" if token[-1] != "A" else "B"))
    assert not tokens_match(token, None)
    assert not tokens_match(None, token)
    assert not tokens_match("", "")
