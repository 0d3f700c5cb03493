"""Adapter choice for the entry points: ``graphctx.open`` and the service."""

from __future__ import annotations

import os
from pathlib import Path

from graphctx.context import TokenCounter, default_token_counter
from graphctx.embed import Embedder, UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants, ScopeGrants
from graphctx.store.neo4j import is_neo4j_location, store_from_location
from graphctx.store.port import GraphStore
from graphctx.store.sqlite.store import SqliteGraphStore


def store_for(location: str | Path) -> GraphStore:
    """The GraphStore adapter for a location: a server URI or an embedded store file."""
    text = str(location)
    if is_neo4j_location(text):
        return store_from_location(text, os.environ)
    return SqliteGraphStore(Path(text))


def build_provider(
    store: str | Path,
    *,
    embedder: Embedder | None = None,
    token_counter: TokenCounter | None = None,
    grants: ScopeGrants | None = None,
) -> ContextProvider:
    """An unopened provider: call ``open()`` (sync) or ``await aopen()`` on your event loop."""
    return ContextProvider(
        store_for(store),
        embedder or UniversalSentenceEncoderEmbedder(),
        token_counter or default_token_counter(),
        grants or CallerAssertedGrants(),
    )


def open_provider(
    store: str | Path,
    *,
    embedder: Embedder | None = None,
    token_counter: TokenCounter | None = None,
    grants: ScopeGrants | None = None,
) -> ContextProvider:
    """Open a provider on an embedded store file (created if missing) or a server URI."""
    return build_provider(
        store, embedder=embedder, token_counter=token_counter, grants=grants
    ).open()
