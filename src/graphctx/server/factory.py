"""The service's adapter choice: like :func:`graphctx.adapters.open_provider`, but left unopened,
because the app's lifespan (or the stdio runner) opens it on the serving event loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from graphctx.adapters import build_provider as build_core_provider
from graphctx.embed import embedder_from_spec
from graphctx.provider import ContextProvider

__all__ = ["build_provider", "warm_up"]


def build_provider(store: str | Path, embedder_spec: str = "use") -> ContextProvider:
    """An unopened provider for the service. Grants are installed by the app."""
    return build_core_provider(store, embedder=embedder_from_spec(embedder_spec))


async def warm_up(provider: ContextProvider) -> None:
    """Load the embedding model now, not on the first caller's clock."""
    await asyncio.to_thread(provider.embedder.embed_query, "warm up")
