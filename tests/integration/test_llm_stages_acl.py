"""A hidden chunk's text never reaches a prompt of the optional LLM stages.

Random principals (static grants) ask with random allowed scopes, with all three stages on,
against a recorded server that captures every request body. Every document carries a secret
token no query uses; the token of every document outside the request's effective scopes must
be absent from every body the server received for that request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_stages_world import RecordedChat, chat_for, stage_of

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import AccessDeniedError
from graphctx.provider import ContextProvider
from graphctx.retrieve.assist import LlmStagesConfig
from graphctx.retrieve.authorize import StaticGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fake_chat import ChatBody

SCOPES = ("hr", "finance", "board", "ops")
TOPICS = ("overtime pay", "annual leave", "severance pay", "dismissal notice")
GRANTS = {
    "ana": frozenset({"hr", "ops"}),
    "ben": frozenset({"finance"}),
    "cyd": frozenset(SCOPES),
    "dee": frozenset({"board"}),
}
DOCS = {
    f"{scope}-{n}": (scope, f"{topic} rules for {scope}: token SECRET{scope.upper()}{n}X.")
    for scope in SCOPES
    for n, topic in enumerate(TOPICS)
}


def answer(body: ChatBody) -> str:
    stage = stage_of(body)
    if stage == "rewrite":
        return json.dumps({"rewrites": ["overtime pay and severance pay", "board rules"]})
    if stage == "route":
        return json.dumps({"routes": ["fulltext", "vector", "graph"]})
    shown = body["messages"][1]["content"].count("<source id=")
    return json.dumps({"order": [f"C{i}" for i in range(shown, 0, -1)]})


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[tuple[ContextProvider, RecordedChat]]:
    root = tmp_path_factory.mktemp("llm-acl")
    docs = root / "docs"
    docs.mkdir()
    for doc_id, (scope, text) in DOCS.items():
        (docs / f"{doc_id}.md").write_text(
            f"---\ndocument_id: {doc_id}\nscopes: [{scope}]\n---\n{text}\n", encoding="utf-8"
        )
    with RecordedChat(answer) as server:
        config = LlmStagesConfig(
            chat_for(server), rewrite=True, route=True, rerank=True, cache_size=0
        )
        store = SqliteGraphStore(root / "store.sqlite")
        with ContextProvider(
            store, embedder, default_token_counter(), StaticGrants(GRANTS), llm_stages=config
        ).open() as provider:
            provider.ingest_path(docs, namespace="acl")
            yield provider, server


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    principal=st.sampled_from(sorted(GRANTS)),
    allowed=st.lists(st.sampled_from(SCOPES), min_size=1, max_size=4, unique=True),
    topics=st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True),
    mode=st.sampled_from([RetrievalMode.AUTO, RetrievalMode.HYBRID, RetrievalMode.GRAPH]),
)
def test_no_prompt_holds_text_of_a_chunk_the_principal_may_not_see(
    world: tuple[ContextProvider, RecordedChat],
    principal: str,
    allowed: list[str],
    topics: list[str],
    mode: RetrievalMode,
) -> None:
    provider, server = world
    query = " and how ".join(f"what about {t}" for t in topics) + "?"
    effective = GRANTS[principal] & set(allowed)
    before = len(server.requests)
    request = ContextRequest(
        query=query,
        principal_id=principal,
        allowed_scopes=allowed,
        namespace="acl",
        retrieval_mode=mode,
        timeout_ms=10_000,
    )
    try:
        response = provider.retrieve(request)
    except AccessDeniedError:
        assert not effective
        assert len(server.requests) == before  # refused before any model is asked
        return
    bodies = json.dumps(server.requests[before:], ensure_ascii=False)
    assert bodies, "the stages were asked"
    secrets = {doc_id: text.split("token ")[1].rstrip(".") for doc_id, (_, text) in DOCS.items()}
    if len(topics) >= 2 and len(response.items) >= 2:  # reranked: visible text was shown
        assert any(secrets[i.document_id] in bodies for i in response.items)
    for doc_id, (scope, _) in DOCS.items():
        secret = secrets[doc_id]
        if scope not in effective:
            assert secret not in bodies, (doc_id, sorted(effective))
            assert all(secret not in item.content for item in response.items)
