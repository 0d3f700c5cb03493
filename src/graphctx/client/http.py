"""GraphctxClient: one method per operation of the service's HTTP API, typed both ways."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Final, Self, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from graphctx.client.errors import (
    ServiceUnreachableError,
    UnexpectedResponseError,
    error_from_problem,
)
from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode
from graphctx.contract.parsing import invalid_request_from
from graphctx.errors import GraphctxError, InvalidRequestError
from graphctx.server.models import (
    ContextBody,
    DeleteResult,
    DocumentIn,
    IngestResult,
    Problem,
    RenderedContext,
    SearchResponse,
    SourceList,
    WhoAmI,
)

__all__ = ["DEFAULT_TIMEOUT_S", "GraphctxClient"]

DEFAULT_TIMEOUT_S: Final = 30.0
# a retrieval may take its own timeout_ms plus the service's grace (5 s) and the wire
RETRIEVAL_GRACE_S: Final = 10.0
PROBLEM_MEDIA_TYPE: Final = "application/problem+json"
M = TypeVar("M", bound=BaseModel)
Upload = tuple[str, tuple[str, bytes]]  # ("files", (name, content)): one multipart part


class GraphctxClient:
    """A synchronous client for ``graphctx serve``. Constructing it does no I/O.

    ``namespace`` is the project the methods use when a call names none; a
    :class:`ContextRequest` that leaves ``namespace`` unset gets it too. The key decides the
    principal and scopes unless a call names them: :meth:`retrieve` and :meth:`render` take a
    question alone. ``timeout_s`` bounds
    every HTTP exchange; a retrieval waits at least its own ``timeout_ms`` plus
    ``RETRIEVAL_GRACE_S``, so a long request is never cut short by the client. ``transport``
    is httpx's (tests pass an ``httpx.MockTransport``).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        namespace: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        sent = dict(headers or {})
        if api_key is not None:
            sent["Authorization"] = f"Bearer {api_key}"
        self.namespace = namespace
        self._timeout_s = timeout_s
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"), headers=sent, timeout=timeout_s, transport=transport
        )

    # --- lifecycle ------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- who the key is -------------------------------------------------------------------
    def whoami(self) -> WhoAmI:
        """``GET /v1/whoami``: the key's principal, and its projects and scopes."""
        return self._send(WhoAmI, "GET", "/v1/whoami")

    # --- the full contract ----------------------------------------------------------------
    def retrieve(
        self,
        request: ContextRequest | str,
        *,
        namespace: str | None = None,
        scopes: Sequence[str] | None = None,
        principal_id: str | None = None,
        retrieval_mode: RetrievalMode | str | None = None,
        max_tokens: int | None = None,
        timeout_ms: int | None = None,
        freshness_required_at: datetime | None = None,
        trace_id: str | None = None,
    ) -> ContextResponse:
        """``POST /v1/context``: the evidence bundle for a ContextRequest, or for a question
        alone (``principal_id`` and ``scopes`` then default to the key's, the project to the
        client's)."""
        body, wait = self._context_body(
            request,
            namespace=namespace,
            allowed_scopes=None if scopes is None else list(scopes),
            principal_id=principal_id,
            retrieval_mode=mode_of(retrieval_mode),
            max_tokens=max_tokens,
            timeout_ms=timeout_ms,
            freshness_required_at=freshness_required_at,
            trace_id=trace_id,
        )
        return self._send(ContextResponse, "POST", "/v1/context", json=body, timeout_s=wait)

    def render(
        self,
        request: ContextRequest | str,
        *,
        namespace: str | None = None,
        scopes: Sequence[str] | None = None,
        principal_id: str | None = None,
        retrieval_mode: RetrievalMode | str | None = None,
        max_tokens: int | None = None,
        timeout_ms: int | None = None,
        freshness_required_at: datetime | None = None,
        trace_id: str | None = None,
    ) -> RenderedContext:
        """``POST /v1/context/messages``: the bundle and the chat messages rendered from it;
        takes what :meth:`retrieve` takes."""
        body, wait = self._context_body(
            request,
            namespace=namespace,
            allowed_scopes=None if scopes is None else list(scopes),
            principal_id=principal_id,
            retrieval_mode=mode_of(retrieval_mode),
            max_tokens=max_tokens,
            timeout_ms=timeout_ms,
            freshness_required_at=freshness_required_at,
            trace_id=trace_id,
        )
        path = "/v1/context/messages"
        return self._send(RenderedContext, "POST", path, json=body, timeout_s=wait)

    # --- a project's search form and documents --------------------------------------------
    def search(
        self,
        query: str,
        *,
        namespace: str | None = None,
        limit: int | None = None,
        scopes: Sequence[str] | None = None,
        retrieval_mode: RetrievalMode | str | None = None,
        max_tokens: int | None = None,
        timeout_ms: int | None = None,
    ) -> SearchResponse:
        """``POST /v1/projects/{project}/search``: principal and scopes default to the key's."""
        form = {
            "query": query,
            "limit": limit,
            "allowed_scopes": None if scopes is None else list(scopes),
            "retrieval_mode": mode_of(retrieval_mode),
            "max_tokens": max_tokens,
            "timeout_ms": timeout_ms,
        }
        body = {name: value for name, value in form.items() if value is not None}
        path = f"{self._project_path(namespace)}/search"
        return self._send(SearchResponse, "POST", path, json=body)

    def list_documents(self, *, namespace: str | None = None) -> SourceList:
        """``GET /v1/projects/{project}/documents``: every version the key may see."""
        return self._send(SourceList, "GET", f"{self._project_path(namespace)}/documents")

    def ingest(
        self,
        documents: Iterable[DocumentIn],
        *,
        namespace: str | None = None,
        scopes: Sequence[str] = (),
    ) -> IngestResult:
        """``POST /v1/projects/{project}/documents`` with JSON documents (needs ``can_write``)."""
        body = {
            "documents": [d.model_dump(mode="json", exclude_none=True) for d in documents],
            "scopes": list(scopes),
        }
        path = f"{self._project_path(namespace)}/documents"
        return self._send(IngestResult, "POST", path, json=body)

    def upload(
        self,
        files: Sequence[Path | str],
        *,
        namespace: str | None = None,
        scopes: Sequence[str] = (),
        source_version: str | None = None,
    ) -> IngestResult:
        """The same route with files (multipart ``files``), loaded like ``graphctx ingest``."""
        data: dict[str, str] = {}
        if scopes:
            data["scopes"] = ",".join(scopes)
        if source_version is not None:
            data["source_version"] = source_version
        paths = [Path(file) for file in files]
        parts = [("files", (path.name, path.read_bytes())) for path in paths]
        path = f"{self._project_path(namespace)}/documents"
        return self._send(IngestResult, "POST", path, data=data, files=parts)

    def delete_document(self, document_id: str, *, namespace: str | None = None) -> DeleteResult:
        """``DELETE /v1/projects/{project}/documents/{document_id}``: every version."""
        path = f"{self._project_path(namespace)}/documents/{quote(document_id, safe='')}"
        return self._send(DeleteResult, "DELETE", path)

    # --- probes ---------------------------------------------------------------------------
    def healthy(self) -> bool:
        """``GET /healthz``: whether the process answers at all."""
        try:
            return self._http.get("/healthz").status_code == 200
        except httpx.HTTPError:
            return False

    def check_ready(self) -> None:
        """``GET /readyz``: return when the store answers, else raise the service's error."""
        self._exchange("GET", "/readyz")

    # --- plumbing -------------------------------------------------------------------------
    def _context_body(
        self, request: ContextRequest | str, **options: object
    ) -> tuple[dict[str, object], float]:
        """The JSON body for a request, or for a question with options (validated here, as the
        service will: a bad option fails before the network), and how long to wait."""
        given = {name: value for name, value in options.items() if value is not None}
        if isinstance(request, ContextRequest):
            if given:
                raise InvalidRequestError(
                    "pass a ContextRequest alone, or a question with options: "
                    + ", ".join(sorted(given)),
                    field=min(given),
                )
            if self.namespace is not None and "namespace" not in request.model_fields_set:
                request = request.model_copy(update={"namespace": self.namespace})
            body: dict[str, object] = request.model_dump(mode="json", exclude_none=True)
            return body, self._wait_for(request.timeout_ms)
        if self.namespace is not None:
            given.setdefault("namespace", self.namespace)
        try:
            question = ContextBody.model_validate({"query": request, **given})
        except ValidationError as exc:
            raise invalid_request_from(exc) from exc
        body = question.model_dump(mode="json", exclude_unset=True)
        return body, self._wait_for(question.timeout_ms)

    def _wait_for(self, timeout_ms: int) -> float:
        return max(self._timeout_s, timeout_ms / 1000 + RETRIEVAL_GRACE_S)

    def _project_path(self, namespace: str | None) -> str:
        project = namespace if namespace is not None else self.namespace
        if project is None:
            raise InvalidRequestError(
                "name the project: GraphctxClient(namespace=...) or namespace=",
                field="namespace",
            )
        return f"/v1/projects/{quote(project, safe='')}"

    def _send(
        self,
        model: type[M],
        method: str,
        path: str,
        *,
        json: object = None,
        data: Mapping[str, str] | None = None,
        files: list[Upload] | None = None,
        timeout_s: float | None = None,
    ) -> M:
        response = self._exchange(
            method, path, json=json, data=data, files=files, timeout_s=timeout_s
        )
        try:
            return model.model_validate_json(response.content)
        except ValidationError as exc:
            raise UnexpectedResponseError(
                f"{method} {path} answered a body that is not a {model.__name__}"
            ) from exc

    def _exchange(
        self,
        method: str,
        path: str,
        *,
        json: object = None,
        data: Mapping[str, str] | None = None,
        files: list[Upload] | None = None,
        timeout_s: float | None = None,
    ) -> httpx.Response:
        timeout = self._timeout_s if timeout_s is None else timeout_s
        try:
            response = self._http.request(
                method, path, json=json, data=data, files=files, timeout=timeout
            )
        except httpx.TimeoutException as exc:
            raise ServiceUnreachableError(f"{method} {path} timed out") from exc
        except httpx.HTTPError as exc:
            raise ServiceUnreachableError(
                f"{method} {path} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if response.is_success:
            return response
        raise _error_of(response) from None


def mode_of(value: RetrievalMode | str | None) -> RetrievalMode | None:
    """A retrieval mode from its value (``"hybrid"``); a wrong one is InvalidRequestError."""
    if value is None:
        return None
    try:
        return RetrievalMode(value)
    except ValueError:
        names = ", ".join(m.value for m in RetrievalMode)
        raise InvalidRequestError(
            f"retrieval_mode must be one of {names}", field="retrieval_mode"
        ) from None


def _error_of(response: httpx.Response) -> GraphctxError:
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    if kind in (PROBLEM_MEDIA_TYPE, "application/json"):
        try:
            return error_from_problem(Problem.model_validate_json(response.content))
        except ValidationError:
            pass
    return UnexpectedResponseError(
        f"HTTP {response.status_code} without a graphctx problem body ({kind or 'no content type'})"
    )
