"""What a model may send to each MCP tool: closed models, every field described for a model.

Identity is the key's (the transport's), so only the question is required: ``namespace``
defaults to the key's only project, ``allowed_scopes`` to every scope the key holds there and
``principal_id`` to the key's principal. A request may still narrow the scopes, and name
another principal only when its key may impersonate (:class:`GraphctxService` decides both;
a default never widens anything).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.contract.parsing import invalid_request_from, parse_request
from graphctx.contract.request import (
    MAX_QUERY_CHARS,
    MAX_SCOPES,
    MAX_TIMEOUT_MS,
    MAX_TOKENS_LIMIT,
    NamespaceName,
    PrincipalId,
    ScopeName,
)
from graphctx.errors import GraphctxError
from graphctx.server.auth import Identity
from graphctx.server.models import TRACE_ID_PATTERN
from graphctx.server.service import GraphctxService

__all__ = [
    "ContextArguments",
    "ListSourcesArguments",
    "ReadSourceArguments",
    "WhoAmIArguments",
    "parse_arguments",
    "request_for",
]

DEFAULT_SOURCE_TOKENS = 800
MAX_CHUNK_ID_CHARS = 512
_CLOSED = ConfigDict(extra="forbid")

M = TypeVar("M", bound=BaseModel)
Scopes = Annotated[list[ScopeName], Field(min_length=1, max_length=MAX_SCOPES)]
SCOPES_HELP = (
    "Only these of the key's scopes (narrows, never widens). Omit it to read with every "
    "scope the key holds in the project."
)
PRINCIPAL_HELP = (
    "Act for this principal. Omit it: the key's own principal. Another one is refused unless "
    "the key may impersonate."
)


class ContextArguments(BaseModel):
    """``retrieve_context`` and ``render_context``."""

    model_config = _CLOSED

    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)] = Field(
        description="The question to find evidence for, in natural language."
    )
    namespace: NamespaceName | None = Field(
        default=None,
        description="The project to read. Omit it when the key reads one project only; "
        "`whoami` lists the key's projects.",
    )
    allowed_scopes: Scopes | None = Field(default=None, description=SCOPES_HELP)
    principal_id: PrincipalId | None = Field(default=None, description=PRINCIPAL_HELP)
    retrieval_mode: RetrievalMode | None = Field(
        default=None,
        description="Which retrieval routes may run: auto (the default: the router decides), "
        "hybrid (text and vector search), graph (also expand through the knowledge graph) "
        "or text2cypher (only where the service enables it).",
    )
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] | None = Field(
        default=None,
        description="Token budget for the evidence items' content (default 2000; the "
        "service may cap it lower).",
    )
    timeout_ms: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)] | None = Field(
        default=None,
        description="Deadline in milliseconds (default 3000); what is found by then is "
        "returned and the manifest says what ran out of time.",
    )
    freshness_required_at: AwareDatetime | None = Field(
        default=None,
        description="Only evidence valid at this instant (ISO 8601 with a time zone).",
    )
    trace_id: Annotated[str, StringConstraints(pattern=TRACE_ID_PATTERN)] | None = Field(
        default=None, description="An id to find this call in the service's logs."
    )


class ReadSourceArguments(BaseModel):
    """``read_source``."""

    model_config = _CLOSED

    chunk_id: Annotated[
        str,
        StringConstraints(
            min_length=1, max_length=MAX_CHUNK_ID_CHARS, pattern=r"^[^\x00-\x1f\x7f]+$"
        ),
    ] = Field(description="The `chunk_id` of a cited item (S1, S2, ...) in a bundle.")
    namespace: NamespaceName | None = Field(
        default=None,
        description="The project of the bundle the item came from. Omit it when the key "
        "reads one project only.",
    )
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] = Field(
        default=DEFAULT_SOURCE_TOKENS,
        description="Token budget for the returned text: the cited chunk, then as much of "
        "the document before and after it as fits.",
    )
    allowed_scopes: Scopes | None = Field(default=None, description=SCOPES_HELP)
    principal_id: PrincipalId | None = Field(default=None, description=PRINCIPAL_HELP)


class ListSourcesArguments(BaseModel):
    """``list_sources``."""

    model_config = _CLOSED

    # Any string: a project the key does not hold reads as missing, however it is spelt.
    project_id: str | None = Field(
        default=None,
        description="The project whose documents to list. Omit it when the key reads one "
        "project only.",
    )


class WhoAmIArguments(BaseModel):
    """``whoami`` takes nothing."""

    model_config = _CLOSED


def parse_arguments(model: type[M], arguments: dict[str, Any]) -> M:
    """Validate a tool's JSON arguments; one typed error naming the field."""
    try:
        return model.model_validate_json(json.dumps(arguments))
    except ValidationError as exc:
        error: GraphctxError = invalid_request_from(exc)
        raise error from exc


def request_for(
    service: GraphctxService, identity: Identity, arguments: ContextArguments
) -> ContextRequest:
    """The ContextRequest a tool call stands for, with the key's defaults filled in."""
    project = service.default_project(identity, arguments.namespace)
    grant = service.readable(identity, project)
    fields = arguments.model_dump(mode="json", exclude_none=True)
    fields["namespace"] = project
    fields.setdefault("principal_id", identity.principal_id)
    fields.setdefault("allowed_scopes", sorted(grant.scopes))
    return parse_request(json.dumps(fields))
