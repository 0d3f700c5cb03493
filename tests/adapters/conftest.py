"""Every adapter against the same two-project corpus, two ways: a real ``graphctx serve`` on a
loopback socket (through graphctx.client) and a provider in this process.

Both sides hold the same grants: rita reads ``public`` in alpha, ada reads ``public`` and
``secret``. The in-process provider reads a copy of the service's store, so neither side
waits on the other's connection.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from adapter_world import GRANTS, Sources

from graphctx.client import GraphctxClient
from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import StaticGrants
from graphctx.server.keys import generate_key
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.service import Harness, ingest_corpus, serve_harness


# Each suite builds its own store and service: the adapters' writer tests add documents that
# the service's own tests must not see.
@pytest.fixture(scope="session")
def corpus_store(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Path:
    return ingest_corpus(tmp_path_factory.mktemp("adapter-corpus"), embedder)


@pytest.fixture(scope="session")
def api_keys() -> dict[str, str]:
    return {name: generate_key(name) for name in ("rita", "wes", "ada")}


@pytest.fixture(scope="session")
def harness(
    corpus_store: Path, api_keys: dict[str, str], embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[Harness]:
    with serve_harness(corpus_store, api_keys, embedder) as served:
        yield served


@pytest.fixture(scope="session")
def in_process(
    corpus_store: Path,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: UniversalSentenceEncoderEmbedder,
) -> Iterator[ContextProvider]:
    copy = tmp_path_factory.mktemp("adapter-in-process") / "store.sqlite"
    shutil.copy(corpus_store, copy)
    provider = ContextProvider(
        SqliteGraphStore(copy), embedder, default_token_counter(), StaticGrants(GRANTS)
    )
    with provider.open() as opened:
        yield opened


@pytest.fixture(scope="session", params=["served", "in_process"])
def sources(
    request: pytest.FixtureRequest, harness: Harness, in_process: ContextProvider
) -> Iterator[Sources]:
    clients = {
        name: GraphctxClient(harness.url, api_key=harness.keys[name], namespace="alpha")
        for name in ("rita", "ada", "wes")
    }
    try:
        yield Sources(request.param, harness, in_process, clients)
    finally:
        for client in clients.values():
            client.close()
