from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore


@pytest.fixture(scope="session")
def embedder() -> UniversalSentenceEncoderEmbedder:
    return UniversalSentenceEncoderEmbedder()


@pytest.fixture
def provider(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[ContextProvider]:
    store = SqliteGraphStore(tmp_path / "store.sqlite")
    with ContextProvider(
        store, embedder, default_token_counter(), CallerAssertedGrants()
    ).open() as opened:
        yield opened
