"""Authentication: who is calling, and what each project grants them.

Two ways in, nothing else (there is no unauthenticated mode):

* an API key, as ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``, verified against the
  scrypt hash of the config entry its key id names (see :mod:`graphctx.server.keys`);
* trusted-gateway headers (principal and per-project scopes), honoured only when gateway mode
  is on *and* the request carries the shared secret (compared in constant time).

Any gateway identity header without a valid secret fails: forged headers are refused, never
ignored in favour of another credential. Gateway identities never write.

Failed checks are budgeted per (key id, client), so many client addresses can each start a
scrypt check. Checks are therefore also capped for the whole service: at most
``MAX_CONCURRENT_KEY_CHECKS`` run at once, on threads of their own (never the event loop's
default pool, which store reads use), and at most ``MAX_WAITING_KEY_CHECKS`` wait; past that
a check is refused at once with 429 ``rate_limited``. Keys verified before are answered from
memory and never wait, and requests that bring the same key while its check runs share that
one check (a service's first burst of clients would otherwise queue one scrypt check each and
have the ones past the cap refused, although every key is good); each of them still pays its
own failure when the key is wrong.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from multiprocessing.synchronize import Semaphore
from typing import Final

from graphctx.contract.request import NAME_PATTERN, NAMESPACE_PATTERN
from graphctx.errors import ConfigurationError
from graphctx.server.config import ApiKeyConfig, GatewayConfig, ServiceSettings
from graphctx.server.errors import AuthenticationError, RateLimitedError
from graphctx.server.keys import parse_key, verify_key
from graphctx.server.ratelimit import RateLimiter, TokenBucketLimiter

__all__ = ["Authenticator", "Credentials", "Identity", "KeyCheckSlots", "ProjectGrant", "Via"]

VERIFIED_CACHE_SIZE: Final = 4_096
FAILURES_PER_SECOND: Final = 1.0  # failed verifications a key id may cost us, sustained
FAILURE_BURST: Final = 10
# scrypt checks running at once, service-wide: half the cores, so the rest keeps serving
MAX_CONCURRENT_KEY_CHECKS: Final = max(1, (os.cpu_count() or 2) // 2)
MAX_WAITING_KEY_CHECKS: Final = 32  # checks queued behind them before new ones are refused
MAX_GRANTS_HEADER_CHARS: Final = 8_192

_NAME = re.compile(NAME_PATTERN)
_NAMESPACE = re.compile(NAMESPACE_PATTERN)


class Via(StrEnum):
    API_KEY = "api_key"
    GATEWAY = "gateway"


@dataclass(frozen=True)
class ProjectGrant:
    scopes: frozenset[str]
    can_write: bool = False


@dataclass(frozen=True)
class Identity:
    """An authenticated caller. ``subject`` names its rate-limit bucket and its log lines."""

    principal_id: str
    subject: str
    via: Via
    projects: Mapping[str, ProjectGrant] = field(default_factory=dict)
    can_impersonate: bool = False

    def grant(self, project: str) -> ProjectGrant | None:
        return self.projects.get(project)


@dataclass(frozen=True)
class Credentials:
    """What a request presented, transport-neutral (header names resolved already)."""

    api_key: str | None = None
    gateway_secret: str | None = None
    gateway_principal: str | None = None
    gateway_grants: str | None = None
    # The peer address. Failed attempts are budgeted per (key id, client): key ids are not
    # secret, so a budget per key id alone would let anyone lock a key's owner out.
    client: str = ""

    @classmethod
    def from_headers(cls, headers: Mapping[str, str], gateway: GatewayConfig) -> Credentials:
        """``headers`` must be case-insensitive (Starlette ``Headers``)."""
        authorization = headers.get("authorization")
        header_key = headers.get("x-api-key")
        bearer: str | None = None
        if authorization is not None:
            scheme, _, token = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise AuthenticationError("the Authorization header must be 'Bearer <key>'")
            bearer = token.strip()
        if bearer is not None and header_key is not None and bearer != header_key:
            raise AuthenticationError("two different keys were sent")
        return cls(
            api_key=bearer if bearer is not None else header_key,
            gateway_secret=headers.get(gateway.secret_header.lower()),
            gateway_principal=headers.get(gateway.principal_header.lower()),
            gateway_grants=headers.get(gateway.grants_header.lower()),
        )

    @property
    def claims_gateway(self) -> bool:
        return any(
            v is not None
            for v in (self.gateway_secret, self.gateway_principal, self.gateway_grants)
        )


class Authenticator:
    """``failures`` holds the failed-check budgets and ``key_checks`` caps the checks running
    at once; both default to this process's own. The workers of one service pass shared
    ones (:class:`graphctx.server.workers.SharedState`), so N workers never allow N times
    the failures or run N times the checks."""

    def __init__(
        self,
        settings: ServiceSettings,
        *,
        failures: RateLimiter | None = None,
        key_checks: Semaphore | None = None,
    ) -> None:
        self._entries = {entry.id: entry for entry in settings.keys}
        self._identities = {entry.id: _key_identity(entry) for entry in settings.keys}
        self._verified: dict[bytes, str] = {}
        self._failures = failures or TokenBucketLimiter(FAILURES_PER_SECOND, FAILURE_BURST)
        self._gateway = settings.gateway
        self._gateway_digest = _gateway_digest(settings.gateway)
        self._checks = KeyCheckSlots(
            MAX_CONCURRENT_KEY_CHECKS, MAX_WAITING_KEY_CHECKS, shared=key_checks
        )
        self._in_flight: dict[bytes, asyncio.Future[bool]] = {}

    async def authenticate(self, credentials: Credentials) -> Identity:
        if credentials.claims_gateway:
            if credentials.api_key is not None:
                raise AuthenticationError("send either an API key or gateway headers, not both")
            return self._gateway_identity(credentials)
        if credentials.api_key is None:
            raise AuthenticationError("an API key is required")
        cached = self._cached(credentials.api_key)
        if cached is not None:
            return cached
        entry = self._entry_for(credentials.api_key, credentials.client)
        ok = await self._shared_check(credentials.api_key, entry)
        return self._settle(credentials.api_key, entry, ok, credentials.client)

    async def _shared_check(self, key: str, entry: ApiKeyConfig) -> bool:
        """One check per presented key at a time: later callers await the running one."""
        fingerprint = _fingerprint(key)
        running = self._in_flight.get(fingerprint)
        if running is not None:
            return await asyncio.shield(running)
        check = asyncio.ensure_future(self._checks.run(verify_key, key, entry.hash))
        self._in_flight[fingerprint] = check

        def settled(done: asyncio.Future[bool]) -> None:
            self._in_flight.pop(fingerprint, None)
            if not done.cancelled():
                done.exception()  # retrieved: every waiter may have gone away

        check.add_done_callback(settled)
        return await asyncio.shield(check)

    def authenticate_key(self, key: str) -> Identity:
        """Synchronous key check for entry points outside a request (stdio MCP)."""
        cached = self._cached(key)
        if cached is not None:
            return cached
        entry = self._entry_for(key, "")
        return self._settle(key, entry, verify_key(key, entry.hash), "")

    def _cached(self, key: str) -> Identity | None:
        key_id = self._verified.get(_fingerprint(key))
        return None if key_id is None else self._identities[key_id]

    def _entry_for(self, key: str, client: str) -> ApiKeyConfig:
        parsed = parse_key(key)
        entry = None if parsed is None else self._entries.get(parsed.key_id)
        if entry is None:
            raise AuthenticationError("the API key is not valid")
        if not self._failures.available(_failure_bucket(entry.id, client)):
            raise RateLimitedError("too many failed attempts for this key id", retry_after_s=1)
        return entry

    def _settle(self, key: str, entry: ApiKeyConfig, ok: bool, client: str) -> Identity:
        if not ok:
            self._failures.acquire(_failure_bucket(entry.id, client))
            raise AuthenticationError("the API key is not valid")
        if len(self._verified) >= VERIFIED_CACHE_SIZE:
            self._verified.clear()
        self._verified[_fingerprint(key)] = entry.id
        return self._identities[entry.id]

    def _gateway_identity(self, credentials: Credentials) -> Identity:
        if not self._gateway.enabled or self._gateway_digest is None:
            raise AuthenticationError("gateway headers are not accepted by this service")
        presented = credentials.gateway_secret or ""
        if not hmac.compare_digest(_sha256(presented), self._gateway_digest):
            raise AuthenticationError("the gateway secret is not valid")
        principal = credentials.gateway_principal
        if principal is None or not _NAME.fullmatch(principal):
            raise AuthenticationError("the gateway principal header is missing or malformed")
        projects = _parse_grants(credentials.gateway_grants or "")
        if self._gateway.allowed_projects is not None:
            allowed = set(self._gateway.allowed_projects)
            projects = {p: g for p, g in projects.items() if p in allowed}
        return Identity(principal, f"gateway:{principal}", Via.GATEWAY, projects)


class KeyCheckSlots:
    """Runs key checks on a pool of their own, a few at a time, with a bounded queue.

    Used from one event loop, so the admission count needs no lock. A caller that gives up
    (a dropped connection) frees its place at once; its check still finishes on the pool,
    which is what bounds the CPU spent.
    """

    def __init__(self, concurrency: int, waiting: int, *, shared: Semaphore | None = None) -> None:
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="graphctx-key-check")
        self._limit = concurrency + waiting
        self._admitted = 0
        self._shared = shared  # the service-wide cap when several processes serve

    async def run(self, check: Callable[[str, str], bool], key: str, stored: str) -> bool:
        if self._admitted >= self._limit:
            raise RateLimitedError("too many key checks are in progress", retry_after_s=1)
        self._admitted += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._pool, self._gated, check, key, stored
            )
        finally:
            self._admitted -= 1

    def _gated(self, check: Callable[[str, str], bool], key: str, stored: str) -> bool:
        if self._shared is None:
            return check(key, stored)
        with self._shared:  # waits on this pool's thread, never on the event loop
            return check(key, stored)


def _failure_bucket(key_id: str, client: str) -> str:
    return f"{key_id}|{client}"


def _key_identity(entry: ApiKeyConfig) -> Identity:
    projects = {
        name: ProjectGrant(frozenset(grant.scopes), grant.can_write)
        for name, grant in entry.projects.items()
    }
    return Identity(
        entry.principal, f"key:{entry.id}", Via.API_KEY, projects, entry.can_impersonate
    )


def _parse_grants(header: str) -> dict[str, ProjectGrant]:
    """``project=scope,scope;project2=scope`` -> grants. Anything malformed fails closed."""
    if len(header) > MAX_GRANTS_HEADER_CHARS:
        raise AuthenticationError("the gateway grants header is too long")
    grants: dict[str, ProjectGrant] = {}
    for part in filter(None, (p.strip() for p in header.split(";"))):
        project, sep, scope_list = part.partition("=")
        scopes = frozenset(s.strip() for s in scope_list.split(",") if s.strip())
        if (
            not sep
            or not _NAMESPACE.fullmatch(project.strip())
            or not scopes
            or not all(_NAME.fullmatch(s) for s in scopes)
            or project.strip() in grants
        ):
            raise AuthenticationError("the gateway grants header is malformed")
        grants[project.strip()] = ProjectGrant(scopes)
    return grants


def _gateway_digest(gateway: GatewayConfig) -> bytes | None:
    if gateway.secret is not None:
        return _sha256(gateway.secret.get_secret_value())
    if gateway.secret_sha256 is not None:
        return bytes.fromhex(gateway.secret_sha256)
    if gateway.enabled:
        raise ConfigurationError("gateway mode needs gateway.secret or gateway.secret_sha256")
    return None


def _sha256(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _fingerprint(key: str) -> bytes:
    return hashlib.sha256(b"graphctx-verified-key\0" + key.encode("utf-8")).digest()
