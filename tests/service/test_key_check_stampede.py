"""Many requests that bring the same key before its first check ends share that one check.

A service that just started (or a worker that just forked) sees its clients' first requests
all at once, each with a key not verified yet. Checking every one of them on its own would
queue dozens of identical scrypt checks behind the global cap and refuse the ones past it
with 429 ``rate_limited``, although every key is good (``graphctx bench http`` at 50 clients
saw about 40 such refusals). Identical presented keys are checked once; a wrong key shared
this way still fails for every request that brought it, and each one costs its failure.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from graphctx.server import auth
from graphctx.server.auth import Authenticator, Credentials
from graphctx.server.errors import AuthenticationError
from graphctx.server.keys import generate_key, verify_key
from graphctx.testing.service import service_settings

CLIENTS = 50
WRONG_SECRET = "C" * 43


class CountedChecks:
    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, key: str, stored: str) -> bool:
        with self.lock:
            self.calls += 1
        return verify_key(key, stored)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> CountedChecks:
    checks = CountedChecks()
    monkeypatch.setattr(auth, "verify_key", checks)
    return checks


def test_fifty_first_requests_with_one_good_key_are_all_accepted_after_one_check(
    counted: CountedChecks,
) -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    authenticator = Authenticator(service_settings(keys))

    async def scenario() -> list[str]:
        outcomes = await asyncio.gather(
            *(
                authenticator.authenticate(Credentials(api_key=keys["rita"], client=f"10.0.0.{i}"))
                for i in range(CLIENTS)
            ),
            return_exceptions=True,
        )
        return [o.principal_id if isinstance(o, auth.Identity) else repr(o) for o in outcomes]

    assert asyncio.run(scenario()) == ["rita"] * CLIENTS
    assert counted.calls == 1


def test_a_shared_check_of_a_wrong_key_fails_every_request_that_brought_it(
    counted: CountedChecks,
) -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    authenticator = Authenticator(service_settings(keys))
    wrong = f"gck_rita_{WRONG_SECRET}"

    async def scenario() -> list[str]:
        outcomes = await asyncio.gather(
            *(
                authenticator.authenticate(Credentials(api_key=wrong, client="10.0.0.9"))
                for _ in range(5)
            ),
            return_exceptions=True,
        )
        return [o.code if isinstance(o, AuthenticationError) else repr(o) for o in outcomes]

    assert asyncio.run(scenario()) == ["unauthenticated"] * 5
    assert counted.calls == 1
