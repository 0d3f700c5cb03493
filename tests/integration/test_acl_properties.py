"""ACL as a property: random documents, scopes and principals; nothing ever leaks."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.store.records import DocumentDates, NewChunk, NewDocument

SCOPES = ["eng", "hr", "oncall", "fin", "legal"]
WORDS = [
    "payment",
    "gateway",
    "restart",
    "salary",
    "kafka",
    "broker",
    "outage",
    "급여",
    "재시작",
    "결제",
    "장애",
    "leave",
    "policy",
    "cache",
    "certificate",
]

scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=3)
texts = st.lists(st.sampled_from(WORDS), min_size=2, max_size=12).map(" ".join)
documents = st.lists(st.tuples(texts, scope_sets), min_size=1, max_size=20)


def store_documents(
    provider: ContextProvider,
    embedder: UniversalSentenceEncoderEmbedder,
    namespace: str,
    docs: list[tuple[str, frozenset[str]]],
) -> None:
    vectors = embedder.embed_documents([text for text, _ in docs])

    async def write() -> None:
        for i, (text, scopes) in enumerate(docs):
            digest = hashlib.sha256(text.encode()).hexdigest()
            document = NewDocument(
                namespace=namespace,
                document_id=f"d{i}",
                source_uri=f"test://d{i}",
                scopes=scopes,
                source_version=None,
                title=None,
                media_type="text",
                text=text,
                dates=DocumentDates(updated_at=datetime(2026, 1, 1, tzinfo=UTC)),
                declared_superseded_by=None,
                content_hash=digest,
                metadata_hash=digest,
            )
            chunk = NewChunk(0, 0, len(text), text, vectors[i])
            await provider.store.write_document(document, [chunk], embedder.name)

    provider._run(write())


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(docs=documents, principal_scopes=scope_sets, query=texts)
def test_no_response_ever_contains_a_chunk_outside_the_effective_scopes(
    provider: ContextProvider,
    embedder: UniversalSentenceEncoderEmbedder,
    docs: list[tuple[str, frozenset[str]]],
    principal_scopes: frozenset[str],
    query: str,
) -> None:
    namespace = "p" + uuid.uuid4().hex[:12]
    store_documents(provider, embedder, namespace, docs)
    response = provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="p",
            allowed_scopes=sorted(principal_scopes),
            namespace=namespace,
            max_tokens=4000,
            timeout_ms=20_000,
        )
    )
    scopes_of = {f"d{i}": scopes for i, (_, scopes) in enumerate(docs)}
    for item in response.items:
        assert scopes_of[item.document_id] & principal_scopes, item.document_id
    query_words = set(query.split())
    visible_matches = [
        i
        for i, (text, scopes) in enumerate(docs)
        if scopes & principal_scopes and query_words & set(text.split())
    ]
    if visible_matches:
        assert response.answerable, "an in-scope match was crowded out"


def test_an_in_scope_document_below_many_out_of_scope_lookalikes_is_returned(
    provider: ContextProvider, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    lookalike = "payment gateway restart procedure payment gateway restart"
    docs = [(lookalike, frozenset({"hr"})) for _ in range(80)]
    docs.append(("the cafeteria menu mentions the payment gateway once", frozenset({"eng"})))
    store_documents(provider, embedder, "lookalikes", docs)
    response = provider.retrieve(
        ContextRequest(
            query=lookalike,
            principal_id="p",
            allowed_scopes=["eng"],
            namespace="lookalikes",
        )
    )
    assert [item.document_id for item in response.items] == ["d80"]


def test_the_output_gate_withholds_chunks_whose_scopes_changed_mid_request(
    provider: ContextProvider, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    store_documents(provider, embedder, "gate", [("kafka broker notes", frozenset({"eng"}))])
    original_fetch = provider.store.fetch_chunks
    calls = 0

    async def fetch_then_revoke(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        views = await original_fetch(*args, **kwargs)
        if calls == 1:  # the candidate fetch sees it; revoke before the output gate
            revoked = NewDocument(
                namespace="gate",
                document_id="d0",
                source_uri="test://d0",
                scopes=frozenset({"hr"}),
                source_version=None,
                title=None,
                media_type="text",
                text="kafka broker notes",
                dates=DocumentDates(updated_at=datetime(2026, 1, 1, tzinfo=UTC)),
                declared_superseded_by=None,
                content_hash=hashlib.sha256(b"kafka broker notes").hexdigest(),
                metadata_hash=hashlib.sha256(b"kafka broker notes").hexdigest(),
            )
            await provider.store.write_document(revoked, [], embedder.name)
        return views

    provider.store.fetch_chunks = fetch_then_revoke  # type: ignore[method-assign]
    response = provider.retrieve(
        ContextRequest(
            query="kafka broker",
            principal_id="p",
            allowed_scopes=["eng"],
            namespace="gate",
        )
    )
    assert (response.answerable, response.items) == (False, [])
    assert [(d.stage, d.count) for d in response.denied] == [("output_gate", 1)]
    assert asyncio.iscoroutinefunction(original_fetch)
