"""The service's composition root: every service face (the HTTP app, stdio MCP) gets its
:class:`GraphctxService` from :func:`compose_service`, the one place grants are composed.

The provider comes unopened (:func:`graphctx.adapters.build_provider`), because the app's
lifespan (or the stdio runner) opens it on the serving event loop.
"""

from __future__ import annotations

import asyncio

from graphctx.provider import ContextProvider
from graphctx.server.config import ServiceSettings
from graphctx.server.grants import ConfigGrants
from graphctx.server.metrics import Metrics
from graphctx.server.service import GraphctxService

__all__ = ["compose_service", "warm_up"]


def compose_service(
    settings: ServiceSettings, provider: ContextProvider, metrics: Metrics
) -> GraphctxService:
    """The service over ``provider`` with grants from the auth config.

    The service never trusts caller-asserted scopes: unless ``provider`` already takes its
    grants from a config, the service gets a provider over the same store whose grants are
    the config's (any grants ``provider`` had can only narrow them further). ``provider``
    itself is left as it was.
    """
    if not isinstance(provider.grants, ConfigGrants):
        provider = provider.with_grants(ConfigGrants(settings, narrower=provider.grants))
    return GraphctxService(provider, settings.limits, metrics)


async def warm_up(provider: ContextProvider) -> None:
    """Load the embedding model now, not on the first caller's clock."""
    await asyncio.to_thread(provider.embedder.embed_query, "warm up")
