"""A context body that leaves identity to the key never sees more than the key's grant
(property test, issue 15).

Random documents with random scopes go into a fresh project of a real SQLite store; a random
key (principal, grant, impersonation) sends a body through the HTTP route's only path
(:meth:`GraphctxService.context_request`, then :meth:`GraphctxService.retrieve`), leaving out
``principal_id``, ``allowed_scopes`` or both, or narrowing. Every item returned must come
from a document whose scopes meet the key's grant (∩ any narrowing), under the key's own
principal unless it named another and may impersonate.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.context import default_token_counter
from graphctx.contract import ContextResponse
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import GraphctxError
from graphctx.ingest.pipeline import IngestDefaults
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server.auth import Identity, ProjectGrant, Via
from graphctx.server.config import ServiceSettings
from graphctx.server.factory import compose_service
from graphctx.server.metrics import Metrics
from graphctx.server.models import ContextBody
from graphctx.store.sqlite.store import SqliteGraphStore

SCOPES = ("a", "b", "c", "d")
PRINCIPALS = ("p1", "p2")
TEXT = "Roll back the deploy by switching traffic to blue, then page the on-call engineer."
_projects = itertools.count()
scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1)


@dataclass(frozen=True)
class Key:
    principal: str
    grant: frozenset[str]  # empty: the project is not granted at all
    other_projects: frozenset[str]  # scopes granted in another project, never this one
    can_impersonate: bool

    def identity(self, project: str) -> Identity:
        projects = {"elsewhere": ProjectGrant(self.other_projects)} if self.other_projects else {}
        if self.grant:
            projects[project] = ProjectGrant(self.grant)
        return Identity(self.principal, "key:test", Via.API_KEY, projects, self.can_impersonate)


keys = st.builds(
    Key,
    st.sampled_from(PRINCIPALS),
    st.frozensets(st.sampled_from(SCOPES)),
    st.frozensets(st.sampled_from(SCOPES)),
    st.booleans(),
)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("identity-defaults") / "store.sqlite"


def document(n: int, scopes: frozenset[str]) -> SourceDocument:
    meta = DocumentMetadata(
        document_id=f"doc-{n}", source_uri=f"mem://doc-{n}", scopes=tuple(sorted(scopes))
    )
    return SourceDocument(f"doc-{n}", MediaType.TEXT, f"{TEXT} (copy {n})", meta)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    docs=st.lists(scope_sets, min_size=1, max_size=5),
    key=keys,
    asks_as=st.none() | st.sampled_from(PRINCIPALS),
    narrows_to=st.none() | scope_sets,
)
def test_a_defaulted_request_never_sees_more_than_the_keys_grant(
    store_path: Path,
    embedder: UniversalSentenceEncoderEmbedder,
    docs: list[frozenset[str]],
    key: Key,
    asks_as: str | None,
    narrows_to: frozenset[str] | None,
) -> None:
    project = f"p{next(_projects)}"
    provider = ContextProvider(
        SqliteGraphStore(store_path), embedder, default_token_counter(), CallerAssertedGrants()
    )
    service = compose_service(ServiceSettings(), provider, Metrics())
    identity = key.identity(project)
    body = ContextBody.model_validate(
        {
            "query": "how do I roll back the deploy",
            "namespace": project,
            **({} if asks_as is None else {"principal_id": asks_as}),
            **({} if narrows_to is None else {"allowed_scopes": sorted(narrows_to)}),
        }
    )

    async def main() -> ContextResponse | GraphctxError:
        await provider.aopen()
        try:
            for n, scopes in enumerate(docs):
                await provider.aingest_sources(
                    [document(n, scopes)], IngestDefaults(namespace=project)
                )
            try:
                request = service.context_request(identity, body, "trace-property")
                assert request.principal_id == (asks_as or key.principal)
                return await service.retrieve(identity, request)
            except GraphctxError as exc:
                return exc
        finally:
            await provider.aclose()

    outcome = asyncio.run(main())
    effective = key.grant & (narrows_to if narrows_to is not None else key.grant)
    impersonates = asks_as not in (None, key.principal)
    if not key.grant:
        assert isinstance(outcome, GraphctxError)
        assert outcome.code == "not_found"
        return
    if (impersonates and not key.can_impersonate) or not effective:
        assert isinstance(outcome, GraphctxError), outcome
        assert outcome.code in ("principal_mismatch", "no_effective_scopes")
        return
    assert isinstance(outcome, ContextResponse), outcome
    assert outcome.manifest.effective_scope_count == len(effective)
    for item in outcome.items:
        assert docs[int(item.document_id.removeprefix("doc-"))] & effective, item.document_id
    visible = [n for n, scopes in enumerate(docs) if scopes & effective]
    assert {item.document_id for item in outcome.items} <= {f"doc-{n}" for n in visible}
    assert outcome.answerable == bool(visible)  # the property is not vacuous
