"""``create_app``: the HTTP service (REST + MCP streamable HTTP) over one ContextProvider.

Pass an *unopened* provider; the app's lifespan opens it and closes it. Nothing is read,
opened or bound at import or construction time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI
from starlette.routing import Route

from graphctx.provider import ContextProvider
from graphctx.server.auth import FAILURE_BURST, FAILURES_PER_SECOND, Authenticator
from graphctx.server.config import ServiceSettings
from graphctx.server.factory import compose_service, warm_up
from graphctx.server.http import documents, routes
from graphctx.server.http.cors import install_cors
from graphctx.server.http.deps import AppServices
from graphctx.server.http.docs import install_docs
from graphctx.server.http.errors import install_error_handlers
from graphctx.server.http.limits import BodyLimitMiddleware
from graphctx.server.http.middleware import AuthMiddleware, TraceMiddleware
from graphctx.server.http.openapi import install_openapi
from graphctx.server.mcp.transport import McpHttpEndpoint
from graphctx.server.metrics import Metrics
from graphctx.server.ratelimit import RateLimiter, TokenBucketLimiter
from graphctx.server.ui import is_ui_path
from graphctx.server.ui.routes import install_ui
from graphctx.server.workers import SharedState

__all__ = ["create_app"]

API_VERSION = "1.0.0"


def create_app(
    settings: ServiceSettings, provider: ContextProvider, *, shared: SharedState | None = None
) -> FastAPI:
    """``shared``: the state of a multi-worker service (``graphctx serve --workers N``) this
    app is one worker of: its rate limits, failed-key budgets, key-check cap, metrics and
    explorer sessions are then the service's, not this process's."""
    metrics = Metrics(None if shared is None else shared.metrics_dir)
    limits = settings.limits
    service = compose_service(settings, provider, metrics)  # grants from the auth config
    served = service.provider
    mcp_endpoint = McpHttpEndpoint(service, limits.max_body_bytes) if settings.mcp_http else None
    limiter: RateLimiter
    if shared is None:
        authenticator = Authenticator(settings)
        limiter = TokenBucketLimiter(limits.rate_per_second, limits.rate_burst)
    else:
        failures = shared.limiter("failures", FAILURES_PER_SECOND, FAILURE_BURST)
        authenticator = Authenticator(settings, failures=failures, key_checks=shared.key_checks)
        limiter = shared.limiter("requests", limits.rate_per_second, limits.rate_burst)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            await served.aopen()
            stack.push_async_callback(served.aclose)
            await warm_up(served)
            if mcp_endpoint is not None:
                await stack.enter_async_context(mcp_endpoint.manager.run())
            yield

    app = FastAPI(
        title="graphctx",
        version=API_VERSION,
        description="Permission-aware GraphRAG context: evidence bundles with provenance, "
        "freshness and hard budgets. Every /v1 route needs an API key "
        "(`Authorization: Bearer` or `X-API-Key`).",
        lifespan=lifespan,
        docs_url=None,  # install_docs: served offline, from the package's own assets
        redoc_url=None,
    )
    app.state.graphctx = AppServices(service=service, metrics=metrics, settings=settings)
    app.include_router(routes.router)
    app.include_router(documents.router)
    # /ui: the evidence explorer, same keys and limits
    install_ui(app, authenticator, limiter, shared)
    if mcp_endpoint is not None:
        app.router.routes.append(Route("/mcp", endpoint=mcp_endpoint, include_in_schema=False))
    install_error_handlers(app, metrics)
    install_openapi(app)
    install_docs(app)
    # Added last = outermost: trace/access log, then CORS (answers preflights before any key is
    # asked for), then authentication, then body limits.
    app.add_middleware(
        BodyLimitMiddleware,
        api_limit=limits.max_body_bytes,
        upload_limit=limits.max_upload_bytes,
        metrics=metrics,
    )
    app.add_middleware(
        AuthMiddleware,
        authenticator=authenticator,
        limiter=limiter,
        gateway=settings.gateway,
        metrics=metrics,
        own_authentication=is_ui_path,
    )
    install_cors(app, settings.cors_origins)
    app.add_middleware(TraceMiddleware, metrics=metrics)
    return app
