"""``read_source`` never returns text outside the caller's scopes, and a chunk id the caller
cannot see answers exactly like one that does not exist (property test).

Random documents (with random scopes, some re-written as a new version under other scopes)
go into a fresh project of a real SQLite store; a random identity (grant, principal,
impersonation) asks, with random narrowing, for every chunk id ever written plus a made-up
one, through the service (the MCP tool's only path to the store). Every document version
carries its own marker, so any text from a version the caller may not see is caught.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.context import default_token_counter
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
from graphctx.server.models import SourceExcerpt
from graphctx.store.sqlite.store import SqliteGraphStore

SCOPES = ("a", "b", "c", "d")
PRINCIPALS = ("p1", "p2")
MISSING_ID = "chunk-that-was-never-written"
WORDS = ["rollback", "deploy", "pipeline", "release", "error", "rate", "on-call", "page", "job"]
_projects = itertools.count()

scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1)


@dataclass(frozen=True)
class Version:
    scopes: frozenset[str]
    sections: int
    marker: str = ""

    def text(self, title: str) -> str:
        words = WORDS
        parts = [f"# {title}\n"]
        for n in range(self.sections):
            parts.append(
                f"## Part {n}\n\nStep {n}: {' '.join(words[n:] + words[:n])} {self.marker}. "
                f"Then {' '.join(words)} again and check the {self.marker} log.\n"
            )
        return "\n".join(parts)


documents = st.lists(
    st.tuples(
        st.builds(Version, scope_sets, st.integers(1, 3)),
        st.none() | st.builds(Version, scope_sets, st.integers(1, 3)),
    ),
    min_size=1,
    max_size=3,
)


@dataclass(frozen=True)
class Caller:
    grant: frozenset[str]  # empty: the project is not granted at all
    principal: str
    asks_as: str | None
    can_impersonate: bool
    narrows_to: frozenset[str] | None
    max_tokens: int

    def identity(self, project: str) -> Identity:
        projects = {project: ProjectGrant(self.grant)} if self.grant else {}
        return Identity(self.principal, "test", Via.API_KEY, projects, self.can_impersonate)


callers = st.builds(
    Caller,
    st.frozensets(st.sampled_from(SCOPES)),
    st.sampled_from(PRINCIPALS),
    st.none() | st.sampled_from(PRINCIPALS),
    st.booleans(),
    st.none() | scope_sets,
    st.integers(1, 400),
)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("read-source") / "store.sqlite"


def source(document_id: str, version: Version, text: str) -> SourceDocument:
    meta = DocumentMetadata(
        document_id=document_id,
        source_uri=f"mem://{document_id}",
        scopes=tuple(sorted(version.scopes)),
        title=document_id,
    )
    return SourceDocument(document_id, MediaType.MARKDOWN, text, meta)


@dataclass(frozen=True)
class Written:
    text: str
    scopes: frozenset[str]
    marker: str
    chunk_ids: list[str]


async def write(
    provider: ContextProvider, project: str, docs: list[tuple[Version, Version | None]]
) -> list[Written]:
    """Every version written, each with the scopes its document ends with: a new version
    may narrow a document's scopes (never widen them), and that narrows its older versions
    too."""
    written: list[Written] = []
    for d, versions in enumerate(docs):
        mine: list[Written] = []
        for v, version in enumerate(v for v in versions if v is not None):
            marked = Version(version.scopes, version.sections, f"MARK{project}x{d}x{v}Q")
            text = marked.text(f"doc {d}")
            report = await provider.aingest_sources(
                [source(f"doc-{d}", marked, text)], IngestDefaults(namespace=project)
            )
            if report.errors:
                assert [e.code for e in report.errors] == ["scope_widening_refused"]
                continue
            chunks = await provider.store.document_chunks(project, f"doc-{d}")
            mine.append(Written(text, marked.scopes, marked.marker, [c.chunk_id for c in chunks]))
        written.extend(replace(w, scopes=mine[-1].scopes) for w in mine)
    return written


def answer(outcome: SourceExcerpt | GraphctxError) -> tuple[str, str] | SourceExcerpt:
    if isinstance(outcome, GraphctxError):
        return (outcome.code, outcome.message)
    return outcome


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(docs=documents, caller=callers)
def test_read_source_never_returns_text_outside_the_callers_scopes(
    store_path: Path,
    embedder: UniversalSentenceEncoderEmbedder,
    docs: list[tuple[Version, Version | None]],
    caller: Caller,
) -> None:
    project = f"p{next(_projects)}"
    provider = ContextProvider(
        SqliteGraphStore(store_path), embedder, default_token_counter(), CallerAssertedGrants()
    )
    service = compose_service(ServiceSettings(), provider, Metrics())
    identity = caller.identity(project)

    async def main() -> tuple[list[Written], dict[str, SourceExcerpt | GraphctxError]]:
        await service.provider.aopen()
        try:
            written = await write(service.provider, project, docs)
            outcomes: dict[str, SourceExcerpt | GraphctxError] = {}
            for chunk_id in [MISSING_ID, *(c for w in written for c in w.chunk_ids)]:
                try:
                    outcomes[chunk_id] = await service.read_source(
                        identity,
                        project,
                        chunk_id,
                        principal_id=caller.asks_as,
                        allowed_scopes=None
                        if caller.narrows_to is None
                        else sorted(caller.narrows_to),
                        max_tokens=caller.max_tokens,
                        timeout_ms=10_000,
                    )
                except GraphctxError as exc:
                    outcomes[chunk_id] = exc
            return written, outcomes
        finally:
            await service.provider.aclose()

    written, outcomes = asyncio.run(main())
    missing = answer(outcomes.pop(MISSING_ID))
    assert isinstance(missing, tuple), "a chunk that was never written has no text"
    effective = caller.grant & (caller.narrows_to or caller.grant)
    impersonates = caller.asks_as not in (None, caller.principal)
    refused = not effective or (impersonates and not caller.can_impersonate)
    counter = default_token_counter()
    for version in written:
        visible = bool(version.scopes & effective)
        hidden_markers = [w.marker for w in written if not w.scopes & effective]
        for chunk_id in version.chunk_ids:
            got = answer(outcomes[chunk_id])
            if refused or not visible:
                assert got == missing, (chunk_id, got)  # no existence oracle
                continue
            assert isinstance(got, SourceExcerpt), (chunk_id, got)
            assert version.text[got.start_char : got.end_char] == got.text
            assert not [m for m in hidden_markers if m in got.text]
            assert got.used_tokens == counter.count(got.text) <= caller.max_tokens
