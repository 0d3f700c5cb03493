"""Limits over a real socket: body size before the body is read, and per-key rate limiting."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings, unopened_provider

API_LIMIT = 2_048
UPLOAD_LIMIT = 8_192
BURST = 3


@pytest.fixture(scope="module")
def tight(
    corpus_store: Path, api_keys: dict[str, str], embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[Harness]:
    settings = service_settings(
        api_keys,
        max_body_bytes=API_LIMIT,
        max_upload_bytes=UPLOAD_LIMIT,
        rate_per_second=0.5,
        rate_burst=BURST,
    )
    with serve_in_thread(create_app(settings, unopened_provider(corpus_store, embedder))) as url:
        yield Harness(url=url, keys=api_keys, store=corpus_store)


def test_a_declared_oversize_body_is_refused_before_it_is_read(tight: Harness) -> None:
    with tight.client("wes") as http:
        response = http.post(
            "/v1/projects/alpha/search",
            content=b"x" * (API_LIMIT + 1),
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert response.headers["content-type"] == "application/problem+json"


def test_a_streamed_oversize_body_is_cut_off_at_the_limit(tight: Harness) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(64):
            yield b"y" * 256
        yield b'"}'

    with tight.client("ada") as http:
        response = http.post(
            "/v1/projects/alpha/search",
            content=chunks(),
            headers={"content-type": "application/json"},
        )
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_uploads_get_the_upload_limit_not_the_api_limit(tight: Harness) -> None:
    text = b"# Notes\n\n" + b"The ledger moves in waves. " * 150  # over API, under upload
    with tight.client("wes") as http:
        fits = http.post(
            "/v1/projects/fuzz/documents",
            files={"files": ("waves.md", text)},
            data={"scopes": "public"},
        )
        too_big = http.post(
            "/v1/projects/fuzz/documents",
            files={"files": ("big.md", text * 3)},
            data={"scopes": "public"},
        )
    assert API_LIMIT < len(text) < UPLOAD_LIMIT
    assert fits.status_code == 200, fits.text
    assert too_big.status_code == 413


def test_a_key_over_its_rate_gets_429_with_retry_after_and_others_do_not(
    tight: Harness,
) -> None:
    with tight.client("rita") as rita, tight.client("ada") as ada:
        statuses = [rita.get("/v1/projects/alpha/documents").status_code for _ in range(BURST + 1)]
        limited = rita.get("/v1/projects/alpha/documents")
        other = ada.get("/v1/projects/alpha/documents")
    assert statuses[:BURST] == [200] * BURST
    assert statuses[BURST] == 429
    assert limited.status_code == 429
    assert limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= math.ceil(1 / 0.5)
    assert other.status_code == 200


def test_failed_key_checks_are_throttled_per_key_id(tight: Harness) -> None:
    secret = "A" * 43
    with httpx.Client(base_url=tight.url, timeout=30) as http:
        codes = [
            http.get(
                "/v1/projects/alpha/documents", headers={"X-API-Key": f"gck_ada_{secret}"}
            ).status_code
            for _ in range(12)
        ]
        valid = http.get("/v1/projects/alpha/documents", headers={"X-API-Key": tight.keys["rita"]})
    assert set(codes[:10]) == {401}
    assert codes[-1] == 429
    assert valid.status_code in (200, 429)  # rita's own bucket, unaffected by ada's failures
