"""Adapter choice for the entry points: ``graphctx.open`` and the service."""

from __future__ import annotations

import os
from pathlib import Path

from graphctx.context import TokenCounter, default_token_counter
from graphctx.embed import DEFAULT_EMBEDDER_SPEC, Embedder, embedder_from_spec
from graphctx.provider import ContextProvider
from graphctx.retrieve.assist import LlmStagesConfig
from graphctx.retrieve.authorize import CallerAssertedGrants, ScopeGrants
from graphctx.store.locations import is_neo4j_location
from graphctx.store.port import GraphStore
from graphctx.store.sqlite.store import SqliteGraphStore


def store_for(location: str | Path) -> GraphStore:
    """The GraphStore adapter for a location: a server URI or an embedded store file."""
    text = str(location)
    if is_neo4j_location(text):
        from graphctx.store.neo4j import store_from_location  # the neo4j extra

        return store_from_location(text, os.environ)
    return SqliteGraphStore(Path(text))


def embedder_for(embedder: Embedder | str | None) -> Embedder:
    """An ``Embedder`` as given, or the one a spec names (the default spec when None)."""
    if embedder is None:
        return embedder_from_spec(DEFAULT_EMBEDDER_SPEC)
    if isinstance(embedder, str):
        return embedder_from_spec(embedder)
    return embedder


def build_provider(
    store: str | Path,
    embedder: Embedder | str | None = None,
    *,
    token_counter: TokenCounter | None = None,
    grants: ScopeGrants | None = None,
    llm_stages: LlmStagesConfig | None = None,
) -> ContextProvider:
    """An unopened provider: call ``open()`` (sync) or ``await aopen()`` on your event loop.

    ``embedder`` is an ``Embedder`` or a spec (``"use"``, ``"e5"``, ... see
    :func:`graphctx.embed.embedder_from_spec`); the default is the offline USE model.
    ``llm_stages``: the optional LLM retrieval stages (off by default).
    """
    return ContextProvider(
        store_for(store),
        embedder_for(embedder),
        token_counter or default_token_counter(),
        grants or CallerAssertedGrants(),
        llm_stages=llm_stages,
    )


def open_provider(
    store: str | Path,
    *,
    embedder: Embedder | str | None = None,
    token_counter: TokenCounter | None = None,
    grants: ScopeGrants | None = None,
) -> ContextProvider:
    """Open a provider on an embedded store file (created if missing) or a server URI."""
    return build_provider(
        store, embedder=embedder, token_counter=token_counter, grants=grants
    ).open()
