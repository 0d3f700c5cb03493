from __future__ import annotations

from collections.abc import Iterator

import pytest
from injection_world import World, running_world

from graphctx.embed import UniversalSentenceEncoderEmbedder


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[World]:
    store = tmp_path_factory.mktemp("injection") / "store.sqlite"
    with running_world(store, embedder) as running:
        yield running
