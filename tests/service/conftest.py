"""A real service on a loopback port over the two-project corpus of graphctx.testing.service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.keys import generate_key
from graphctx.testing.service import Harness, ingest_corpus, serve_harness


@pytest.fixture(scope="session")
def corpus_store(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Path:
    return ingest_corpus(tmp_path_factory.mktemp("service-corpus"), embedder)


@pytest.fixture(scope="session")
def api_keys() -> dict[str, str]:
    return {name: generate_key(name) for name in ("rita", "wes", "ada")}


@pytest.fixture(scope="session")
def harness(
    corpus_store: Path, api_keys: dict[str, str], embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[Harness]:
    with serve_harness(corpus_store, api_keys, embedder) as served:
        yield served
