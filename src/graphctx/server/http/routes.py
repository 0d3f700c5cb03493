"""Read routes: the full contract, the simple search form, probes and metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import JSONResponse, Response

from graphctx.contract import ContextRequest, ContextResponse
from graphctx.errors import GraphctxError, StoreUnavailableError
from graphctx.server.http.deps import (
    ProjectId,
    identity_of,
    parse_body,
    read_json,
    services_of,
    set_trace_id,
    trace_id_of,
)
from graphctx.server.http.errors import problem_response
from graphctx.server.http.openapi import documented
from graphctx.server.models import (
    ContextBody,
    RenderedContext,
    SearchRequest,
    SearchResponse,
    WhoAmI,
)

__all__ = ["router"]

router = APIRouter()
READ_ERRORS = (400, 401, 403, 404, 413, 415, 422, 429, 503)


def json_response(
    model: ContextResponse | RenderedContext | SearchResponse | WhoAmI,
) -> Response:
    return Response(model.model_dump_json(), media_type="application/json")


async def context_request_of(request: Request) -> ContextRequest:
    """The body as a ContextRequest, its identity defaulted from the key, whose trace id is
    the request's (or sets the request's)."""
    identity = identity_of(request)
    body = parse_body(ContextBody, await read_json(request))
    if body.trace_id is not None:
        set_trace_id(request, body.trace_id)
    return services_of(request).service.context_request(identity, body, trace_id_of(request))


@router.post(
    "/v1/context",
    response_model=ContextResponse,
    **documented(
        "retrieveContext",
        "context",
        *READ_ERRORS,
        body=ContextBody,
        ok="The evidence bundle (answerable or not, with its reason)",
    ),
    summary="Retrieve an evidence bundle (the full ContextRequest contract)",
    description="The project is the request's `namespace`. Only `query` is needed: an "
    "omitted `principal_id` is the key's principal, omitted `allowed_scopes` every scope the "
    "key holds in the project. A given `principal_id` must be the authenticated principal "
    "unless the key may impersonate; given `allowed_scopes` only narrow the key's grant.",
)
async def post_context(request: Request) -> Response:
    identity = identity_of(request)
    context_request = await context_request_of(request)
    response = await services_of(request).service.retrieve(identity, context_request)
    return json_response(response)


@router.post(
    "/v1/context/messages",
    response_model=RenderedContext,
    **documented(
        "renderContextMessages",
        "context",
        *READ_ERRORS,
        body=ContextBody,
        ok="The bundle and the chat messages rendered from it",
    ),
    summary="Retrieve an evidence bundle and the chat messages rendered from it",
    description="Same body, authorisation, limits and problems as `POST /v1/context`. "
    "`messages` holds the fixed system instruction, then a user message with the question "
    'and one `<source id="Sn">` block per bundle item (document text never enters the '
    "system message). An unanswerable bundle renders an empty context and a no-evidence note.",
)
async def post_context_messages(request: Request) -> Response:
    identity = identity_of(request)
    context_request = await context_request_of(request)
    rendered = await services_of(request).service.render(identity, context_request)
    return json_response(rendered)


@router.post(
    "/v1/projects/{project_id}/search",
    response_model=SearchResponse,
    **documented(
        "searchProject", "search", *READ_ERRORS, body=SearchRequest, ok="The results, best first"
    ),
    summary="Search a project (query, limit -> results with content, source, score)",
)
async def post_search(project_id: ProjectId, request: Request) -> Response:
    identity = identity_of(request)
    form = parse_body(SearchRequest, await read_json(request))
    if form.trace_id is not None:
        set_trace_id(request, form.trace_id)
    result = await services_of(request).service.search(
        identity, project_id, form, trace_id_of(request)
    )
    return json_response(result)


@router.get(
    "/v1/whoami",
    response_model=WhoAmI,
    **documented("whoAmI", "identity", 401, 429, ok="The key's principal and its grants"),
    summary="Who the API key acts as: its principal, projects and scopes",
    description="The principal the key acts as, every project it may read and every scope "
    "it holds there: what an omitted `principal_id` or `allowed_scopes` defaults to. Nothing "
    "else about the key or the service.",
)
async def get_whoami(request: Request) -> Response:
    return json_response(services_of(request).service.whoami(identity_of(request)))


@router.get(
    "/healthz",
    summary="Liveness: the process serves requests",
    **documented("getHealth", "service", secured=False, ok="The process serves requests"),
)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Readiness: the store answers",
    description="200 when the store is open and answers a small read within a few seconds; "
    "otherwise the store's problem: 503 with `retryable` true while it is locked or still "
    "being opened (the service keeps trying by itself), 500 when an operator must act "
    "(a damaged or foreign file).",
    **documented("getReadiness", "service", 500, 503, secured=False, ok="The store answers"),
)
async def readyz(request: Request) -> Response:
    services = services_of(request)
    try:
        await services.service.check_ready()
    except GraphctxError as exc:
        return problem_response(exc, services.metrics)
    except Exception as exc:
        error = StoreUnavailableError(f"store ping failed: {type(exc).__name__}")
        return problem_response(error, services.metrics)
    return JSONResponse({"status": "ready"})


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    **documented(
        "getMetrics",
        "service",
        secured=False,
        ok="The metrics in the Prometheus text format",
        media_type=CONTENT_TYPE_LATEST,
    ),
)
async def metrics(request: Request) -> Response:
    return Response(services_of(request).metrics.render(), media_type=CONTENT_TYPE_LATEST)
