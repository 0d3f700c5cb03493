from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

# Property tests check what is true, not how fast: hypothesis's per-example deadline (200 ms by
# default) is a wall-clock check, and on a loaded machine it fails examples that are correct.
# A test's own @settings still override the rest of this profile.
settings.register_profile("graphctx", deadline=None)
settings.load_profile("graphctx")


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
