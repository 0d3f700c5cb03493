"""Explorer sessions every worker of one ``graphctx serve --workers N`` sees.

The same sessions as :class:`~graphctx.server.ui.sessions.SessionStore` (ids kept only as
digests, idle and absolute expiry, revocation, the oldest dropped past
:data:`~graphctx.server.ui.sessions.MAX_SESSIONS`), kept in the service's shared SQLite file
instead of one process's memory: a browser's next request may reach another worker. The
file lives in the supervisor's private run directory and goes with it, so a restart still
logs everyone out.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from graphctx.server.auth import Identity, ProjectGrant, Via
from graphctx.server.ui.sessions import MAX_SESSIONS, TOKEN_BYTES, Session, session_digest

__all__ = ["SharedSessionStore"]

BUSY_TIMEOUT_MS: Final = 2_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ui_sessions (
    digest BLOB PRIMARY KEY,
    identity TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_seen_at REAL NOT NULL
)
"""


class SharedSessionStore:
    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self._path = path
        self._clock = clock
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT count(*) FROM ui_sessions").fetchone()[0])

    def create(self, identity: Identity) -> Session:
        """A new session for ``identity``; the returned value carries the id for the cookie."""
        now = self._clock()
        session_id = secrets.token_urlsafe(TOKEN_BYTES)
        csrf_token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO ui_sessions VALUES (?, ?, ?, ?, ?)",
                (session_digest(session_id), _dump(identity), csrf_token, now, now),
            )
            conn.execute(
                "DELETE FROM ui_sessions WHERE rowid IN (SELECT rowid FROM ui_sessions"
                " ORDER BY last_seen_at DESC LIMIT -1 OFFSET ?)",
                (MAX_SESSIONS,),
            )
        return Session(identity, csrf_token, now, now, session_id)

    def resolve(self, session_id: str | None) -> Session | None:
        """The live session for ``session_id`` (touching it), or ``None``; expired ones go."""
        if not session_id:
            return None
        digest = session_digest(session_id)
        with self._connection() as conn:
            row = conn.execute(
                "SELECT identity, csrf_token, created_at, last_seen_at FROM ui_sessions"
                " WHERE digest = ?",
                (digest,),
            ).fetchone()
            if row is None:
                return None
            session = Session(_load(row[0]), row[1], row[2], row[3])
            now = self._clock()
            if session.expired(now):
                conn.execute("DELETE FROM ui_sessions WHERE digest = ?", (digest,))
                return None
            conn.execute("UPDATE ui_sessions SET last_seen_at = ? WHERE digest = ?", (now, digest))
        return Session(session.identity, session.csrf_token, session.created_at, now)

    def revoke(self, session_id: str | None) -> None:
        if session_id:
            with self._connection() as conn:
                conn.execute(
                    "DELETE FROM ui_sessions WHERE digest = ?", (session_digest(session_id),)
                )

    def _connection(self) -> sqlite3.Connection:
        """This process's connection (a forked worker never uses its parent's)."""
        if self._conn is None or self._pid != os.getpid():
            conn = sqlite3.connect(self._path, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(_SCHEMA)
            self._conn, self._pid = conn, os.getpid()
        return self._conn


def _dump(identity: Identity) -> str:
    return json.dumps(
        {
            "principal_id": identity.principal_id,
            "subject": identity.subject,
            "via": identity.via.value,
            "projects": {
                name: {"scopes": sorted(grant.scopes), "can_write": grant.can_write}
                for name, grant in identity.projects.items()
            },
            "can_impersonate": identity.can_impersonate,
        }
    )


def _load(text: str) -> Identity:
    data = json.loads(text)
    projects = {
        name: ProjectGrant(frozenset(grant["scopes"]), bool(grant["can_write"]))
        for name, grant in data["projects"].items()
    }
    return Identity(
        data["principal_id"],
        data["subject"],
        Via(data["via"]),
        projects,
        bool(data["can_impersonate"]),
    )
