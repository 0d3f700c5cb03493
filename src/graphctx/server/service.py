"""What the service faces do, with every authorisation decision in one place.

* A project the identity holds no grant for is :func:`project_not_found`, exactly like a
  project that does not exist; nothing about the store is consulted to decide it.
* ``principal_id`` must be the authenticated principal unless the key may impersonate.
  Every face lets it be omitted (MCP, the search form, the HTTP context routes through
  :meth:`GraphctxService.context_request`) and defaults it and the scopes from the identity;
  MCP also a key's only project (:meth:`GraphctxService.default_project`). A default never
  widens.
* Effective scopes = the identity's grant for the project ∩ the request's ``allowed_scopes``;
  the provider's ScopeGrants (:class:`~graphctx.server.grants.ConfigGrants`) applies the same
  rule again inside the pipeline.
* Writes need ``can_write``; a writer only writes documents whose scopes it holds, and only
  replaces or deletes documents whose scopes it holds entirely. The latest version each
  decision was made on travels into the store's write transaction as an
  :class:`~graphctx.store.records.Expectation` (compare-and-set), so a document that moves
  between the check and the write is refused, never overwritten or re-scoped.
* ``read_source`` answers a chunk the caller cannot see exactly like a missing one
  (:func:`source_not_found`).
* ``write_denied`` depends on the key alone (``can_write``). Every per-document refusal is
  :class:`~graphctx.errors.DocumentConflictError`, one code and one message whatever the
  reason (a scope the writer lacks, seen or unseen, or a concurrent write), so a writer learns
  only that the id is not its to manage. Deleting a document the writer cannot see at all
  answers 404, like a missing one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import replace

from graphctx.context import messages_for_response
from graphctx.contract import ContextRequest, ContextResponse, EvidenceItem
from graphctx.contract.parsing import parse_request
from graphctx.errors import (
    AccessDeniedError,
    DocumentConflictError,
    InvalidDocumentError,
    InvalidRequestError,
    NotFoundError,
    StoreUnavailableError,
)
from graphctx.ingest.pipeline import IngestDefaults
from graphctx.ingest.scope_ceiling import check_scope_ceiling, document_scopes
from graphctx.ingest.source import SourceDocument
from graphctx.provider import ContextProvider
from graphctx.retrieve.surrounding import ItemContext
from graphctx.server.auth import Identity, ProjectGrant
from graphctx.server.config import LimitsConfig
from graphctx.server.errors import LimitExceededError, project_not_found
from graphctx.server.grants import bind_identity
from graphctx.server.metrics import Metrics
from graphctx.server.models import (
    ContextBody,
    DocumentError,
    DocumentOutcome,
    IngestResult,
    ProjectAccess,
    RenderedContext,
    RenderedMessage,
    SearchRequest,
    SearchResponse,
    SearchResult,
    SourceExcerpt,
    SourceList,
    SourceSummary,
    WhoAmI,
)
from graphctx.server.timings import coarsen_timings, log_timings
from graphctx.store.records import Expectation

__all__ = ["GraphctxService", "source_not_found", "with_document_defaults"]

# The provider bounds every stage by timeout_ms itself (measured overrun: tens of ms); this
# only catches a pipeline bug, so the caller never waits unbounded.
DEADLINE_GRACE_S = 5.0  # docs/security.md quotes it


class GraphctxService:
    def __init__(self, provider: ContextProvider, limits: LimitsConfig, metrics: Metrics) -> None:
        self.provider = provider
        self.limits = limits
        self.metrics = metrics
        # A service outlives a store that is briefly unavailable at start (locked by another
        # process, a server still starting): it starts not-ready and opens the store itself.
        provider.keep_opening_when_unavailable = True
        # Retrieval is partly CPU-bound on the event loop thread: admitting every request at
        # once would make all of them miss their deadlines together. Waiting here does not
        # count against timeout_ms (the provider's clock starts when a slot is free), but it is
        # bounded by it: a request that cannot start within its own timeout is refused
        # (503 ``overloaded``, retryable) instead of queueing without limit.
        self._slots = asyncio.Semaphore(limits.max_concurrent_retrievals)

    # --- authorisation ------------------------------------------------------------------------
    def readable(self, identity: Identity, project: str) -> ProjectGrant:
        grant = identity.grant(project)
        if grant is None:
            raise project_not_found()
        return grant

    def default_project(self, identity: Identity, project: str | None) -> str:
        """``project``, or the identity's only project when none is named."""
        if project is not None:
            return project
        if not identity.projects:
            raise project_not_found()
        if len(identity.projects) > 1:
            raise InvalidRequestError(
                "this key reads several projects; name one as `namespace`: "
                + ", ".join(sorted(identity.projects)),
                field="namespace",
                code="namespace_required",
            )
        return next(iter(identity.projects))

    def whoami(self, identity: Identity) -> WhoAmI:
        return WhoAmI(
            principal_id=identity.principal_id,
            projects=[
                ProjectAccess(project_id=project, scopes=sorted(grant.scopes))
                for project, grant in sorted(identity.projects.items())
            ],
        )

    def context_request(
        self, identity: Identity, body: ContextBody, trace_id: str
    ) -> ContextRequest:
        """The ContextRequest an HTTP body stands for: an omitted ``principal_id`` is the
        key's, omitted ``allowed_scopes`` every scope the key holds in the project (a project
        it holds none in is :func:`project_not_found`); given ones are checked as sent."""
        grant = self.readable(identity, body.namespace)
        fields = body.model_dump(mode="json", exclude_none=True)
        fields.setdefault("principal_id", identity.principal_id)
        fields.setdefault("allowed_scopes", sorted(grant.scopes))
        fields.setdefault("trace_id", trace_id)
        return parse_request(json.dumps(fields))

    def writable(self, identity: Identity, project: str) -> ProjectGrant:
        grant = self.readable(identity, project)
        if not grant.can_write:
            raise AccessDeniedError("this key may not write to the project", code="write_denied")
        return grant

    # --- store health ---------------------------------------------------------------------------
    async def check_ready(self) -> None:
        """Raise the store's typed error unless it is open and answers a read now."""
        self._check_store_open()
        await self.provider.aping()

    def _check_store_open(self) -> None:
        """While the store is still being opened, every request gets the reason, typed."""
        failure = self.provider.open_failure
        if failure is None:
            return
        if isinstance(failure, StoreUnavailableError):
            raise StoreUnavailableError(
                failure.message, retryable=failure.retryable, code=failure.code
            )
        raise type(failure)(failure.message, code=failure.code)

    # --- reads --------------------------------------------------------------------------------
    async def retrieve(
        self, identity: Identity, request: ContextRequest, *, face: str = "http"
    ) -> ContextResponse:
        narrowed = self._narrowed(identity, request)
        with bind_identity(identity):
            await self._admit(request.timeout_ms)
            try:
                response = await asyncio.wait_for(
                    self.provider.aretrieve(narrowed),
                    timeout=request.timeout_ms / 1000 + DEADLINE_GRACE_S,
                )
            except TimeoutError as exc:
                raise StoreUnavailableError(
                    "retrieval overran its deadline", code="deadline_overrun"
                ) from exc
            finally:
                self._slots.release()
        self.metrics.observe_response(response, face)
        log_timings(response, face)
        return coarsen_timings(response)

    async def surrounding(
        self, identity: Identity, request: ContextRequest, items: Sequence[EvidenceItem]
    ) -> list[ItemContext]:
        """The visible document text around ``items`` (the explorer), under the same
        authorisation as :meth:`retrieve`."""
        narrowed = self._narrowed(identity, request)
        with bind_identity(identity):
            return await self.provider.asurrounding_text(narrowed, items)

    def _narrowed(self, identity: Identity, request: ContextRequest) -> ContextRequest:
        """``request`` with ``allowed_scopes`` narrowed to the identity's grant, or the reason
        it may not be served at all."""
        scopes = self._effective(
            identity,
            request.namespace,
            request.principal_id,
            request.allowed_scopes,
            request.max_tokens,
            request.timeout_ms,
        )
        return request.model_copy(update={"allowed_scopes": scopes})

    def _effective(
        self,
        identity: Identity,
        project: str,
        principal_id: str,
        allowed_scopes: Sequence[str],
        max_tokens: int,
        timeout_ms: int,
    ) -> list[str]:
        """The scopes a read may use: the identity's grant ∩ ``allowed_scopes``, or the reason
        it may not be served at all."""
        grant = self.readable(identity, project)
        if principal_id != identity.principal_id and not identity.can_impersonate:
            raise AccessDeniedError(
                "principal_id must be the authenticated principal", code="principal_mismatch"
            )
        self._check_budget(max_tokens, timeout_ms)
        self._check_store_open()
        scopes = sorted(grant.scopes.intersection(allowed_scopes))
        if not scopes:
            raise AccessDeniedError(
                "none of the requested scopes is granted in this project",
                code="no_effective_scopes",
            )
        return scopes

    async def _admit(self, timeout_ms: int) -> None:
        """Take a retrieval slot, waiting at most ``timeout_ms``."""
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                await self._slots.acquire()
        except TimeoutError as exc:
            raise StoreUnavailableError(
                "every retrieval slot stayed busy for the request's whole timeout",
                code="overloaded",
            ) from exc

    async def render(
        self, identity: Identity, request: ContextRequest, *, face: str = "http"
    ) -> RenderedContext:
        """:meth:`retrieve`, plus the chat messages rendered from exactly the bundle's items."""
        response = await self.retrieve(identity, request, face=face)
        messages = messages_for_response(request.query, response)
        return RenderedContext(
            bundle=response,
            messages=[RenderedMessage(role=m.role, content=m.content) for m in messages],
        )

    async def read_source(
        self,
        identity: Identity,
        project: str,
        chunk_id: str,
        *,
        principal_id: str | None = None,
        allowed_scopes: Sequence[str] | None = None,
        max_tokens: int,
        timeout_ms: int,
    ) -> SourceExcerpt:
        """More of a cited document around chunk ``chunk_id``, under the same authorisation
        as :meth:`retrieve` and through the output gate; a chunk the caller may not see is
        :func:`source_not_found`, exactly like a chunk that does not exist."""
        grant = self.readable(identity, project)
        principal = principal_id or identity.principal_id
        requested = sorted(grant.scopes) if allowed_scopes is None else list(allowed_scopes)
        scopes = self._effective(identity, project, principal, requested, max_tokens, timeout_ms)
        with bind_identity(identity):
            await self._admit(timeout_ms)
            try:
                window = await self.provider.aread_source(
                    project,
                    principal,
                    scopes,
                    chunk_id,
                    max_tokens=max_tokens,
                    timeout_ms=timeout_ms,
                )
            finally:
                self._slots.release()
        if window is None:
            raise source_not_found()
        chunk = window.chunk
        return SourceExcerpt(
            project_id=project,
            document_id=chunk.document_id,
            document_version=chunk.document_version,
            source_uri=chunk.source_uri,
            title=chunk.title,
            chunk_id=chunk.chunk_id,
            superseded=chunk.superseded,
            start_char=window.start_char,
            end_char=window.end_char,
            text=window.text,
            used_tokens=window.used_tokens,
            max_tokens=max_tokens,
            truncated_before=window.truncated_before,
            truncated_after=window.truncated_after,
        )

    async def search(
        self, identity: Identity, project: str, form: SearchRequest, trace_id: str
    ) -> SearchResponse:
        grant = self.readable(identity, project)
        limit = form.limit or self.limits.default_results
        if limit > self.limits.max_results:
            raise LimitExceededError(
                f"limit is over this service's cap of {self.limits.max_results}", field="limit"
            )
        fields: dict[str, object] = {
            "query": form.query,
            "principal_id": form.principal_id or identity.principal_id,
            "allowed_scopes": form.allowed_scopes or sorted(grant.scopes),
            "namespace": project,
            "retrieval_mode": form.retrieval_mode,
            "trace_id": form.trace_id or trace_id,
            "freshness_required_at": form.freshness_required_at,
        }
        if form.max_tokens is not None:
            fields["max_tokens"] = form.max_tokens
        if form.timeout_ms is not None:
            fields["timeout_ms"] = form.timeout_ms
        response = await self.retrieve(identity, parse_request(fields))
        return SearchResponse(
            query=form.query,
            limit=limit,
            results=[search_result(item) for item in response.items[:limit]],
            answerable=response.answerable,
            reason=response.reason,
            denied=response.denied,
            limits=response.limits,
            trace_id=response.trace_id,
        )

    async def list_sources(self, identity: Identity, project: str) -> SourceList:
        grant = self.readable(identity, project)
        self._check_store_open()
        summaries = await self.provider.alist_documents(project, grant.scopes)
        return SourceList(
            project_id=project,
            documents=[
                SourceSummary(
                    document_id=s.document_id,
                    document_version=s.document_version,
                    source_uri=s.source_uri,
                    title=s.title,
                    chunk_count=s.chunk_count,
                    superseded=s.superseded,
                )
                for s in summaries
            ],
        )

    # --- writes -------------------------------------------------------------------------------
    async def ingest(
        self,
        identity: Identity,
        project: str,
        sources: Sequence[SourceDocument],
        default_scopes: Sequence[str],
        rejected: Sequence[DocumentError] = (),
    ) -> IngestResult:
        grant = self.writable(identity, project)
        self._check_store_open()
        if len(sources) + len(rejected) > self.limits.max_documents:
            raise LimitExceededError(
                f"at most {self.limits.max_documents} documents per request", field="documents"
            )
        errors = list(rejected)
        accepted: list[SourceDocument] = []
        expected: dict[str, Expectation] = {}
        for source in sources:
            checked = await self._check_write(project, grant, source, default_scopes)
            if isinstance(checked, DocumentError):
                errors.append(checked)
                continue
            accepted.append(source)
            if checked is not None:
                expected.setdefault(checked[0], checked[1])
        defaults = IngestDefaults(
            namespace=project, scopes=tuple(default_scopes), permitted_scopes=grant.scopes
        )
        with bind_identity(identity):
            report = await self.provider.aingest_sources(accepted, defaults, expected=expected)
        errors.extend(
            DocumentError(origin=e.origin, code=e.code, message=e.message) for e in report.errors
        )
        return IngestResult(
            project_id=project,
            documents=[
                DocumentOutcome(
                    origin=d.origin,
                    document_id=d.document_id,
                    outcome=d.outcome,
                    version=d.version,
                    chunks=d.chunks,
                )
                for d in report.documents
            ],
            errors=errors,
            chunks_written=report.chunks_written,
        )

    async def delete(self, identity: Identity, project: str, document_id: str) -> int:
        grant = self.writable(identity, project)
        self._check_store_open()
        latest = await self.provider.alatest_version(project, document_id)
        if latest is None or not latest.scopes & grant.scopes:
            raise NotFoundError("no such document", code="not_found")
        if not latest.scopes <= grant.scopes:
            raise DocumentConflictError()
        return await self.provider.adelete_document(
            project, document_id, expected=Expectation(latest)
        )

    async def _check_write(
        self,
        project: str,
        grant: ProjectGrant,
        source: SourceDocument,
        default_scopes: Sequence[str],
    ) -> DocumentError | tuple[str, Expectation] | None:
        """A problem, or the document id with the latest version the decision was made on."""
        document_id = source.metadata.document_id
        try:
            check_scope_ceiling(source, document_scopes(source, default_scopes), grant.scopes)
        except InvalidDocumentError as exc:
            # Worded for the key holder; the pipeline applies the same ceiling again.
            return DocumentError(
                origin=source.origin,
                code=exc.code,
                message="the document's scopes must be among the scopes this key holds",
            )
        if document_id is None:
            return None  # the pipeline refuses a write it holds no expectation for
        latest = await self.provider.alatest_version(project, document_id)
        if latest is not None and not latest.scopes <= grant.scopes:
            conflict = DocumentConflictError()
            return DocumentError(origin=source.origin, code=conflict.code, message=conflict.message)
        return document_id, Expectation(latest)

    def _check_budget(self, max_tokens: int, timeout_ms: int) -> None:
        caps = self.limits
        if max_tokens > caps.max_tokens:
            raise LimitExceededError(
                f"max_tokens is over this service's cap of {caps.max_tokens}", field="max_tokens"
            )
        if timeout_ms > caps.max_timeout_ms:
            raise LimitExceededError(
                f"timeout_ms is over this service's cap of {caps.max_timeout_ms}",
                field="timeout_ms",
            )


def source_not_found() -> NotFoundError:
    """The one error for a chunk that is missing *or* not visible: same code, same text."""
    return NotFoundError("no such source", code="not_found")


def with_document_defaults(
    source: SourceDocument, document_id: str, source_uri: str
) -> SourceDocument:
    """Give a source the id and URI it would otherwise derive from a server-side path."""
    meta = source.metadata
    return replace(
        source,
        metadata=replace(
            meta,
            document_id=meta.document_id or document_id,
            source_uri=meta.source_uri or source_uri,
        ),
    )


def search_result(item: EvidenceItem) -> SearchResult:
    """An item of a bundle in the search form's shape."""
    return SearchResult(
        rank=item.rank,
        content=item.content,
        source=item.source_uri,
        score=item.retrieval_scores.fused,
        citation_id=item.citation_id,
        document_id=item.document_id,
        chunk_id=item.chunk_id,
        document_version=item.document_version,
        freshness=item.freshness,
        provenance_path=item.provenance_path,
        retrieval_scores=item.retrieval_scores,
        span=item.span,
        truncated=item.truncated,
        pages=item.pages,
    )
