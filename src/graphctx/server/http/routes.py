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
from graphctx.server.models import RenderedContext, SearchRequest, SearchResponse

__all__ = ["router"]

router = APIRouter()
READ_ERRORS = (400, 401, 403, 404, 413, 415, 422, 429, 503)


def json_response(model: ContextResponse | RenderedContext | SearchResponse) -> Response:
    return Response(model.model_dump_json(), media_type="application/json")


async def context_request_of(request: Request) -> ContextRequest:
    """The body as a ContextRequest whose trace id is the request's (or sets the request's)."""
    context_request = parse_body(ContextRequest, await read_json(request))
    if "trace_id" in context_request.model_fields_set:
        set_trace_id(request, context_request.trace_id)
        return context_request
    return context_request.model_copy(update={"trace_id": trace_id_of(request)})


@router.post(
    "/v1/context",
    response_model=ContextResponse,
    **documented(
        "retrieveContext",
        "context",
        *READ_ERRORS,
        body=ContextRequest,
        ok="The evidence bundle (answerable or not, with its reason)",
    ),
    summary="Retrieve an evidence bundle (the full ContextRequest contract)",
    description="The project is the request's `namespace`. `principal_id` must be the "
    "authenticated principal unless the key may impersonate; `allowed_scopes` only narrows "
    "the key's grant.",
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
        body=ContextRequest,
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
