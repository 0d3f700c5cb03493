"""What browser and OAuth-probing MCP clients meet before any key: ``/.well-known/*`` is a
plain 404 (this service has no OAuth metadata), a CORS preflight is never 401, and a CORS
allow-list (off by default) lets exactly the listed origins call with their API keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings, unopened_provider

ALLOWED = "https://agent.example.com"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type",
}


@pytest.fixture(scope="module")
def cors_url(
    corpus_store: Path, api_keys: dict[str, str], embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[str]:
    settings = service_settings(api_keys).model_copy(update={"cors_origins": [ALLOWED]})
    app = create_app(settings, unopened_provider(corpus_store, embedder))
    with serve_in_thread(app) as url:
        yield url


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/openid-configuration",
    ],
)
def test_well_known_paths_are_not_found_not_unauthorized(harness: Harness, path: str) -> None:
    with harness.client() as anonymous, harness.client("rita") as rita:
        answers = [anonymous.get(path), rita.get(path)]
    assert [a.status_code for a in answers] == [404, 404]
    assert {a.json()["code"] for a in answers} == {"not_found"}


@pytest.mark.parametrize("path", ["/mcp", "/v1/context", "/v1/projects/alpha/search"])
def test_a_preflight_is_not_unauthorized_and_grants_nothing_by_default(
    harness: Harness, path: str
) -> None:
    with harness.client() as anonymous:
        answer = anonymous.options(path, headers={"Origin": ALLOWED, **PREFLIGHT})
    assert answer.status_code != 401
    assert "access-control-allow-origin" not in answer.headers


def test_a_listed_origin_may_call_with_its_key_and_others_get_no_cors_headers(
    cors_url: str, harness: Harness
) -> None:
    key = {"Authorization": f"Bearer {harness.keys['rita']}"}
    with httpx.Client(base_url=cors_url, timeout=60) as client:
        preflight = client.options("/mcp", headers={"Origin": ALLOWED, **PREFLIGHT})
        other = client.options("/mcp", headers={"Origin": "https://evil.example.net", **PREFLIGHT})
        call = client.get("/v1/projects/alpha/documents", headers={"Origin": ALLOWED, **key})
        anonymous = client.get("/v1/projects/alpha/documents", headers={"Origin": ALLOWED})
        foreign = client.get(
            "/v1/projects/alpha/documents", headers={"Origin": "https://evil.example.net", **key}
        )
    assert preflight.status_code in (200, 204)
    assert preflight.headers["access-control-allow-origin"] == ALLOWED
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in preflight.headers
    assert other.status_code != 401
    assert "access-control-allow-origin" not in other.headers
    assert call.status_code == 200
    assert call.headers["access-control-allow-origin"] == ALLOWED
    assert anonymous.status_code == 401  # CORS opens no door the key does not
    assert "access-control-allow-origin" not in foreign.headers
