"""Browser sessions for the evidence explorer: the API key is typed once, never carried again.

A browser cannot attach ``Authorization`` to a navigation, and a key in a URL ends up in
history, logs and ``Referer`` headers. So the login form POSTs the key once; the service
verifies it with the same :class:`~graphctx.server.auth.Authenticator` as the API and keeps
the resulting :class:`~graphctx.server.auth.Identity` server-side under a random session id.
The browser only holds that id, in an ``HttpOnly; SameSite=Strict; Path=/ui`` cookie.

Only a SHA-256 digest of each id is kept, so the table itself holds no usable credential.
Sessions end on logout, after :data:`IDLE_TIMEOUT_S` without use, or :data:`MAX_AGE_S` after
login, whichever comes first. Every session has its own CSRF token for the state-changing
form (logout); the login form uses a double-submit token bound to a short-lived cookie.
Sessions live in this process only (the workers of ``graphctx serve --workers N`` share
theirs: :mod:`graphctx.server.ui.shared_sessions`): a restart logs everyone out, which is the
safe failure.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from graphctx.server.auth import Identity

__all__ = [
    "IDLE_TIMEOUT_S",
    "MAX_AGE_S",
    "MAX_SESSIONS",
    "Session",
    "SessionStore",
    "Sessions",
    "new_login_token",
    "session_digest",
    "tokens_match",
]

IDLE_TIMEOUT_S: Final = 30 * 60
MAX_AGE_S: Final = 8 * 60 * 60
MAX_SESSIONS: Final = 10_000  # oldest sessions are dropped first past this
TOKEN_BYTES: Final = 32


@dataclass(frozen=True)
class Session:
    """What a session id resolves to. ``session_id`` is only known when it was just created."""

    identity: Identity
    csrf_token: str
    created_at: float
    last_seen_at: float
    session_id: str = ""

    def expired(self, now: float) -> bool:
        return now - self.last_seen_at > IDLE_TIMEOUT_S or now - self.created_at > MAX_AGE_S


class Sessions(Protocol):
    """Where the explorer keeps its sessions: this process, or every worker's."""

    def __len__(self) -> int: ...

    def create(self, identity: Identity) -> Session: ...

    def resolve(self, session_id: str | None) -> Session | None: ...

    def revoke(self, session_id: str | None) -> None: ...


class SessionStore:
    """In-memory sessions keyed by the digest of their id; the clock is injectable for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._sessions: OrderedDict[bytes, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def create(self, identity: Identity) -> Session:
        """A new session for ``identity``; the returned value carries the id for the cookie."""
        now = self._clock()
        session_id = secrets.token_urlsafe(TOKEN_BYTES)
        session = Session(identity, secrets.token_urlsafe(TOKEN_BYTES), now, now)
        self._sessions[session_digest(session_id)] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return Session(identity, session.csrf_token, now, now, session_id)

    def resolve(self, session_id: str | None) -> Session | None:
        """The live session for ``session_id`` (touching it), or ``None``; expired ones go."""
        if not session_id:
            return None
        key = session_digest(session_id)
        session = self._sessions.get(key)
        if session is None:
            return None
        now = self._clock()
        if session.expired(now):
            del self._sessions[key]
            return None
        touched = Session(session.identity, session.csrf_token, session.created_at, now)
        self._sessions[key] = touched
        self._sessions.move_to_end(key)
        return touched

    def revoke(self, session_id: str | None) -> None:
        if session_id:
            self._sessions.pop(session_digest(session_id), None)


def new_login_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def tokens_match(expected: str | None, presented: str | None) -> bool:
    """Constant-time comparison; a missing token on either side never matches."""
    if not expected or not presented:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), presented.encode("utf-8"))


def session_digest(session_id: str) -> bytes:
    """What a session id is kept as: a SHA-256 digest, never the id."""
    return hashlib.sha256(b"graphctx-ui-session\0" + session_id.encode("utf-8")).digest()
