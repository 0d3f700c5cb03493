"""A real service on a loopback port over the two-project corpus of graphctx.testing.service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.server.keys import generate_key
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings, unopened_provider, write_corpus


@pytest.fixture(scope="session")
def corpus_store(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Path:
    root = write_corpus(tmp_path_factory.mktemp("service-corpus"))
    store = root / "store.sqlite"
    with unopened_provider(store, embedder).open() as provider:
        for project in ("alpha", "beta"):
            report = provider.ingest_path(root / project, namespace=project)
            assert not report.errors, report.errors
    return store


@pytest.fixture(scope="session")
def api_keys() -> dict[str, str]:
    return {name: generate_key(name) for name in ("rita", "wes", "ada")}


@pytest.fixture(scope="session")
def harness(
    corpus_store: Path,
    api_keys: dict[str, str],
    embedder: UniversalSentenceEncoderEmbedder,
) -> Iterator[Harness]:
    app = create_app(service_settings(api_keys), unopened_provider(corpus_store, embedder))
    with serve_in_thread(app) as url:
        yield Harness(url=url, keys=api_keys, store=corpus_store)
