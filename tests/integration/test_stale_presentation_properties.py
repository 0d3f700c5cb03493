"""Selection on relevance, stale after current, as properties of whole bundles (SQLite).

Random documents (some expired, some superseded), scopes, principals and budgets through
the real provider: nothing outside the effective scopes appears, no stale item precedes one
that is not stale, the budget holds, citation ids run S1..Sn in the rendered context, and
``answerable`` (the relevance floor's verdict included) is the same as over a store that never
held the documents the caller cannot see — so a refusal tells the caller nothing about them.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.context import messages_for_response
from graphctx.contract import ContextRequest, ContextResponse, Freshness, UnanswerableReason
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.store.records import DocumentDates, NewChunk, NewDocument

SCOPES = ["eng", "hr", "oncall"]
WORDS = [
    "payment",
    "gateway",
    "restart",
    "salary",
    "kafka",
    "broker",
    "rabbitmq",
    "급여",
    "재시작",
    "결제",
    "leave",
    "policy",
    "hotel",
    "limit",
]
EXPIRED = datetime(2025, 1, 1, tzinfo=UTC)

scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=2)
texts = st.lists(st.sampled_from(WORDS), min_size=2, max_size=40).map(" ".join)
# (text, scopes, expired, superseded by the next document)
documents = st.lists(
    st.tuples(texts, scope_sets, st.booleans(), st.booleans()), min_size=1, max_size=12
)
Doc = tuple[str, frozenset[str], bool, bool]


def write(
    provider: ContextProvider,
    embedder: UniversalSentenceEncoderEmbedder,
    namespace: str,
    docs: list[tuple[int, Doc]],
) -> None:
    vectors = embedder.embed_documents([doc[0] for _, doc in docs])

    async def run() -> None:
        for (i, (text, scopes, expired, superseded)), vector in zip(docs, vectors, strict=True):
            digest = hashlib.sha256(f"{i}{text}".encode()).hexdigest()
            document = NewDocument(
                namespace=namespace,
                document_id=f"d{i}",
                source_uri=f"test://d{i}",
                scopes=scopes,
                source_version=None,
                title=None,
                media_type="text",
                text=text,
                dates=DocumentDates(
                    updated_at=datetime(2024, 6, 1, tzinfo=UTC),
                    valid_to=EXPIRED if expired else None,
                ),
                declared_superseded_by=f"d{i + 1}" if superseded else None,
                content_hash=digest,
                metadata_hash=digest,
            )
            chunk = NewChunk(0, 0, len(text), text, vector)
            await provider.store.write_document(document, [chunk], embedder.name)

    provider._run(run())


def ask(
    provider: ContextProvider, namespace: str, query: str, scopes: frozenset[str], budget: int
) -> ContextResponse:
    return provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="p",
            allowed_scopes=sorted(scopes),
            namespace=namespace,
            max_tokens=budget,
            timeout_ms=20_000,
        )
    )


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    docs=documents,
    principal=scope_sets,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    budget=st.integers(40, 1500),
)
def test_bundles_keep_scopes_budget_ids_and_put_stale_after_current(
    provider: ContextProvider,
    embedder: UniversalSentenceEncoderEmbedder,
    docs: list[Doc],
    principal: frozenset[str],
    query: str,
    budget: int,
) -> None:
    everything = "s" + uuid.uuid4().hex[:12]
    visible_only = "v" + uuid.uuid4().hex[:12]
    numbered = list(enumerate(docs))
    write(provider, embedder, everything, numbered)
    seen = [(i, doc) for i, doc in numbered if doc[1] & principal]
    if seen:
        write(provider, embedder, visible_only, seen)
    response = ask(provider, everything, query, principal, budget)

    scopes_of = {f"d{i}": doc[1] for i, doc in numbered}
    for item in response.items:
        assert scopes_of[item.document_id] & principal, item.document_id
    stale = [item.freshness is Freshness.STALE for item in response.items]
    assert stale == sorted(stale), "a stale item precedes one that is not stale"
    for item in response.items:
        i = int(item.document_id[1:])
        if docs[i][2]:
            assert item.freshness is Freshness.STALE, f"{item.document_id} expired"
    assert response.limits.used_tokens <= budget
    ids = [item.citation_id for item in response.items]
    assert ids == [f"S{n}" for n in range(1, len(ids) + 1)]
    assert [item.rank for item in response.items] == list(range(1, len(ids) + 1))
    _, user = messages_for_response(query, response)
    assert re.findall(r'<source id="(S\d+)"', user.content) == ids

    if seen:
        alone = ask(provider, visible_only, query, principal, budget)
        assert alone.answerable == response.answerable, "hidden documents changed the verdict"
        if not response.answerable:
            assert alone.reason == response.reason
    else:
        assert not response.answerable
        assert response.reason is UnanswerableReason.NO_EVIDENCE
