"""Failed key checks are budgeted per (key id, client): a key id is public, so a budget per key
id alone would let anyone lock the key's owner out by sending wrong secrets."""

from __future__ import annotations

import asyncio

import pytest

from graphctx.server.auth import Authenticator, Credentials
from graphctx.server.errors import AuthenticationError, RateLimitedError
from graphctx.server.keys import generate_key
from graphctx.testing.service import service_settings

WRONG_SECRET = "A" * 43


def exhaust(authenticator: Authenticator, client: str) -> list[str]:
    outcomes = []
    for _ in range(15):
        try:
            asyncio.run(
                authenticator.authenticate(
                    Credentials(api_key=f"gck_ada_{WRONG_SECRET}", client=client)
                )
            )
        except (AuthenticationError, RateLimitedError) as exc:
            outcomes.append(exc.code)
    return outcomes


def test_wrong_secrets_from_one_client_do_not_lock_the_owner_out_elsewhere() -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    authenticator = Authenticator(service_settings(keys))
    outcomes = exhaust(authenticator, "203.0.113.9")
    assert outcomes[-1] == "rate_limited"  # the attacker's own budget is spent
    owner = asyncio.run(
        authenticator.authenticate(Credentials(api_key=keys["ada"], client="198.51.100.7"))
    )
    assert owner.principal_id == "ada"


def test_the_attacking_client_stays_throttled_even_with_the_right_key() -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    authenticator = Authenticator(service_settings(keys))
    exhaust(authenticator, "203.0.113.9")
    with pytest.raises(RateLimitedError):
        asyncio.run(
            authenticator.authenticate(Credentials(api_key=keys["ada"], client="203.0.113.9"))
        )
