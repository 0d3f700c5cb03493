"""Keys, config and grants of the service, without a socket."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from pathlib import Path

import pytest

from graphctx.errors import ConfigurationError
from graphctx.server.auth import Authenticator, Credentials, Identity, ProjectGrant, Via
from graphctx.server.cli import add_server_commands, run_server_command
from graphctx.server.config import GatewayConfig, load_settings
from graphctx.server.errors import AuthenticationError
from graphctx.server.grants import ConfigGrants, bind_identity
from graphctx.server.keys import generate_key, hash_key, parse_key, verify_key
from graphctx.server.ratelimit import TokenBucketLimiter
from graphctx.testing.service import GATEWAY_SECRET, key_entries, service_settings


def test_a_key_verifies_only_against_its_own_salted_hash() -> None:
    key = generate_key("ci-bot")
    first, second = hash_key(key, n=2**10), hash_key(key, n=2**10)
    assert first != second  # a fresh salt every time
    assert (verify_key(key, first), verify_key(key, second)) == (True, True)
    assert not verify_key(key + "x", first)
    assert not verify_key(key, "sha256:" + "0" * 64)
    parsed = parse_key(key)
    assert parsed is not None
    assert parsed.key_id == "ci-bot"
    assert parse_key("gck_ci-bot_short") is None
    assert parse_key("gck_CI_" + "a" * 43) is None


def test_the_environment_overrides_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "service.yaml"
    path.write_text("store: /data/a.sqlite\nlimits: {max_tokens: 4000, max_results: 10}\n")
    monkeypatch.setenv("GRAPHCTX_LIMITS__MAX_TOKENS", "1000")
    settings = load_settings(path)
    assert (settings.store, settings.limits.max_tokens, settings.limits.max_results) == (
        "/data/a.sqlite",
        1000,
        10,
    )


@pytest.mark.parametrize(
    "text",
    [
        "keys: [{id: a, hash: plain-text-key, principal: a}]",
        "keys: [{id: a, hash: 'scrypt:3:8:1:AAAA:BBBB', principal: a}]",
        "limits: {max_tokens: 0}",
        "unknown_setting: 1",
        "gateway: {enabled: true, secret: short}",
        "- not a mapping",
    ],
)
def test_a_bad_config_is_a_configuration_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "service.yaml"
    path.write_text(text)
    with pytest.raises(ConfigurationError):
        load_settings(path)


def test_gateway_mode_without_a_secret_refuses_to_start() -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    settings = service_settings(keys).model_copy(update={"gateway": GatewayConfig(enabled=True)})
    with pytest.raises(ConfigurationError):
        Authenticator(settings)


def test_gateway_headers_are_parsed_strictly() -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    auth = Authenticator(service_settings(keys))
    gateway = GatewayConfig()

    def identify(grants: str, secret: str = GATEWAY_SECRET) -> Identity:
        headers = {
            "x-graphctx-gateway-secret": secret,
            "x-graphctx-principal": "gina",
            "x-graphctx-grants": grants,
        }
        return asyncio.run(auth.authenticate(Credentials.from_headers(headers, gateway)))

    identity = identify("alpha=public,drafts; beta=public")
    assert identity.via is Via.GATEWAY
    assert identity.projects == {"alpha": ProjectGrant(frozenset({"public", "drafts"}))}
    for bad in ("alpha", "alpha=", "=public", "Alpha=public", "alpha=pub lic", "a=b;a=c"):
        with pytest.raises(AuthenticationError):
            identify(bad)
    with pytest.raises(AuthenticationError):
        identify("alpha=public", secret=GATEWAY_SECRET.upper())


def test_service_grants_only_ever_narrow() -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    grants = ConfigGrants(service_settings(keys))
    rita = Identity("rita", "key:rita", Via.API_KEY, {"alpha": ProjectGrant(frozenset({"public"}))})
    assert grants.granted_scopes("alpha", "ada") == frozenset({"public", "secret"})  # config
    assert grants.granted_scopes("nowhere", "ada") == frozenset()
    with bind_identity(rita):
        assert grants.granted_scopes("alpha", "rita") == frozenset({"public"})
        assert grants.granted_scopes("alpha", "ada") == frozenset()  # no impersonation
        assert grants.granted_scopes("beta", "rita") == frozenset()


def test_token_buckets_refill_at_their_rate() -> None:
    now = [0.0]
    limiter = TokenBucketLimiter(2.0, 2, clock=lambda: now[0])
    assert [limiter.acquire("k") for _ in range(3)] == [0.0, 0.0, 0.5]
    now[0] = 0.5
    assert limiter.acquire("k") == 0.0
    assert limiter.acquire("other") == 0.0


def test_keys_hash_prints_a_config_entry_that_verifies(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = argparse.ArgumentParser()
    add_server_commands(parser.add_subparsers(dest="command", required=True))
    key = generate_key("support-bot")
    monkeypatch.setattr("sys.stdin", io.StringIO(key + "\n"))
    assert (
        run_server_command(parser.parse_args(["keys", "hash", "--id", "support-bot", "--stdin"]))
        == 0
    )
    entry = capsys.readouterr().out
    stored = entry.split('hash: "', 1)[1].split('"', 1)[0]
    assert verify_key(key, stored)
    assert run_server_command(parser.parse_args(["keys", "hash", "--id", "other"])) == 0
    generated = capsys.readouterr()
    assert "gck_other_" in generated.err
    assert "gck_other_" not in generated.out


def test_key_entries_round_trip_through_a_json_config(tmp_path: Path) -> None:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    path = tmp_path / "service.json"
    path.write_text(json.dumps({"keys": key_entries(keys)}))
    settings = load_settings(path)
    identity = Authenticator(settings).authenticate_key(keys["wes"])
    assert identity.principal_id == "wes"
    assert identity.grant("gamma") == ProjectGrant(frozenset({"public", "drafts"}), True)
