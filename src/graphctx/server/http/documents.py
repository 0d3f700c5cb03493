"""Document routes of a project: ingest (JSON or multipart files), list, delete."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from graphctx.server.errors import NothingIngestedError, UnsupportedMediaTypeError
from graphctx.server.http.deps import (
    DocumentIdPath,
    ProjectId,
    identity_of,
    media_type,
    parse_body,
    services_of,
)
from graphctx.server.http.openapi import documented
from graphctx.server.http.uploads import Batch, batch_from_form, batch_from_json
from graphctx.server.models import DeleteResult, IngestRequest, IngestResult, SourceList

__all__ = ["router"]

router = APIRouter()
MAX_FORM_FIELDS = 64
MAX_FORM_PART_BYTES = 64 * 1024
INGEST_ERRORS = (400, 401, 403, 404, 413, 415, 422, 429, 503)


@router.post(
    "/v1/projects/{project_id}/documents",
    response_model=IngestResult,
    **documented(
        "ingestDocuments",
        "documents",
        *INGEST_ERRORS,
        body=IngestRequest,
        multipart=True,
        ok="At least one document was ingested; the report lists every outcome and the "
        "documents or files that were refused, each with its reason",
    ),
    summary="Ingest documents: JSON (text + metadata) or multipart file uploads",
    description="Needs `can_write` on the project. Every document's scopes must be among the "
    "key's scopes; the report lists each document's outcome or error. Send JSON "
    "(`IngestRequest`) or `multipart/form-data` with each file in a field named `files`. "
    "When no document at all could be ingested the answer is 422 `nothing_ingested`, with "
    "each document's or file's reason in `errors`, and nothing is written.",
)
async def post_documents(project_id: ProjectId, request: Request) -> Response:
    identity = identity_of(request)
    services = services_of(request)
    services.service.writable(identity, project_id)  # refuse before reading the body
    limits = services.settings.limits
    kind = media_type(request)
    batch: Batch
    if kind == "application/json":
        batch = batch_from_json(parse_body(IngestRequest, await request.body()))
    elif kind == "multipart/form-data":
        async with request.form(
            max_files=limits.max_documents,
            max_fields=MAX_FORM_FIELDS,
            max_part_size=MAX_FORM_PART_BYTES,
        ) as form:
            batch = await batch_from_form(form, limits.max_upload_bytes)
    else:
        raise UnsupportedMediaTypeError("send application/json or multipart/form-data")
    result = await services.service.ingest(
        identity, project_id, batch.sources, batch.scopes, batch.rejected
    )
    if result.errors and not result.documents:
        raise NothingIngestedError(result.errors)
    return Response(result.model_dump_json(), media_type="application/json")


@router.get(
    "/v1/projects/{project_id}/documents",
    response_model=SourceList,
    **documented("listDocuments", "documents", 401, 404, 422, 429, 503, ok="The documents"),
    summary="List the documents (all versions) visible to the caller",
)
async def get_documents(project_id: ProjectId, request: Request) -> Response:
    listing = await services_of(request).service.list_sources(identity_of(request), project_id)
    return Response(listing.model_dump_json(), media_type="application/json")


@router.delete(
    "/v1/projects/{project_id}/documents/{document_id:path}",
    response_model=DeleteResult,
    **documented(
        "deleteDocument",
        "documents",
        401,
        403,
        404,
        409,
        422,
        429,
        503,
        ok="What was deleted",
    ),
    summary="Delete a document (every version)",
)
async def delete_document(
    project_id: ProjectId, document_id: DocumentIdPath, request: Request
) -> Response:
    removed = await services_of(request).service.delete(
        identity_of(request), project_id, document_id
    )
    result = DeleteResult(project_id=project_id, document_id=document_id, deleted_versions=removed)
    return Response(result.model_dump_json(), media_type="application/json")
