"""A flood of bad keys from many client addresses must not starve good requests (issue 13,
item 10b).

Each (key id, client) pair has its own failure budget, so an attacker with many loopback
addresses can start a scrypt check per address at once. Checks are capped globally and run on
their own threads, never on the event loop's default pool (which the SQLite store's reads
share). The flood here is held inside the real ``verify_key`` by an event, so the test
observes the cap and the free default pool directly instead of timing requests.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from graphctx.server import auth
from graphctx.server.auth import Authenticator, Credentials
from graphctx.server.errors import AuthenticationError, RateLimitedError
from graphctx.server.keys import generate_key, verify_key
from graphctx.testing.service import service_settings

FLOOD = 64
WAIT_S = 10.0
PROMPT_S = 2.0  # a bound for a failing run to end, not a latency requirement
WRONG_SECRET = "B" * 43


class HeldChecks:
    """Wraps the real ``verify_key``: records concurrency and threads, holds bad checks."""

    def __init__(self, good_keys: set[str]) -> None:
        self.good_keys = good_keys
        self.release = threading.Event()
        self.lock = threading.Condition()
        self.running = 0
        self.most_running = 0
        self.threads: set[str] = set()

    def __call__(self, key: str, stored: str) -> bool:
        with self.lock:
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            self.threads.add(threading.current_thread().name)
            self.lock.notify_all()
        try:
            if key not in self.good_keys:
                self.release.wait(WAIT_S)
            return verify_key(key, stored)
        finally:
            with self.lock:
                self.running -= 1

    def wait_running(self, count: int) -> bool:
        with self.lock:
            return self.lock.wait_for(lambda: self.running >= count, WAIT_S)


@pytest.fixture
def keys() -> dict[str, str]:
    return {name: generate_key(name) for name in ("rita", "wes", "ada")}


@pytest.fixture
def held(keys: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldChecks]:
    checks = HeldChecks(set(keys.values()))
    monkeypatch.setattr(auth, "verify_key", checks)
    yield checks
    checks.release.set()


def test_a_good_key_is_served_while_a_flood_of_bad_keys_is_being_checked(
    keys: dict[str, str], held: HeldChecks
) -> None:
    authenticator = Authenticator(service_settings(keys))

    async def scenario() -> tuple[list[str], bool, str, str]:
        # A good key seen before (cached), as a client that already works would present it.
        await authenticator.authenticate(Credentials(api_key=keys["wes"], client="10.0.0.1"))
        flood = [
            asyncio.create_task(
                authenticator.authenticate(
                    Credentials(api_key=f"gck_ada_{WRONG_SECRET}", client=f"127.0.{i // 250}.{i}")
                )
            )
            for i in range(FLOOD)
        ]
        try:
            with ThreadPoolExecutor(1) as watcher:
                loop = asyncio.get_running_loop()
                assert await loop.run_in_executor(watcher, held.wait_running, 1)
            # While the flood is held: the event loop's default pool still runs work at once
            # (the SQLite store reads there), and a key seen before authenticates.
            pool_free = await asyncio.wait_for(asyncio.to_thread(lambda: True), PROMPT_S)
            cached = await asyncio.wait_for(
                authenticator.authenticate(Credentials(api_key=keys["wes"], client="10.0.0.1")),
                PROMPT_S,
            )
            still_held = sum(not task.done() for task in flood)
            assert still_held > 0, "the flood ended before the good requests were tried"
        finally:
            held.release.set()
        outcomes = []
        for task in flood:
            try:
                await task
                outcomes.append("accepted")
            except (AuthenticationError, RateLimitedError) as exc:
                outcomes.append(exc.code)
        fresh = await authenticator.authenticate(Credentials(api_key=keys["ada"], client="x"))
        return outcomes, pool_free, cached.principal_id, fresh.principal_id

    outcomes, pool_free, cached, fresh = asyncio.run(scenario())
    assert (pool_free, cached, fresh) == (True, "wes", "ada")
    assert held.most_running <= auth.MAX_CONCURRENT_KEY_CHECKS
    assert not any(name.startswith("asyncio") for name in held.threads), held.threads
    assert set(outcomes) <= {"unauthenticated", "rate_limited"}
    assert "accepted" not in outcomes
