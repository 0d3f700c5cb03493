"""``graphctx.open``: the entry point that chooses adapters from a store location."""

from __future__ import annotations

from pathlib import Path

from graphctx.context import TokenCounter, default_token_counter
from graphctx.embed import Embedder, UniversalSentenceEncoderEmbedder
from graphctx.errors import ConfigurationError
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants, ScopeGrants
from graphctx.store.sqlite.store import SqliteGraphStore

_SERVER_SCHEMES = ("neo4j://", "neo4j+s://", "bolt://", "bolt+s://")


def open_provider(
    store: str | Path,
    *,
    embedder: Embedder | None = None,
    token_counter: TokenCounter | None = None,
    grants: ScopeGrants | None = None,
) -> ContextProvider:
    """Open a provider on an embedded store file (created if missing) or a server URI."""
    location = str(store)
    if location.startswith(_SERVER_SCHEMES):
        raise ConfigurationError(
            f"{location}: the Neo4j backend is not available in this build; use a file path"
        )
    provider = ContextProvider(
        SqliteGraphStore(Path(location)),
        embedder or UniversalSentenceEncoderEmbedder(),
        token_counter or default_token_counter(),
        grants or CallerAssertedGrants(),
    )
    return provider.open()
