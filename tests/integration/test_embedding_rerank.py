"""The offline rerank: the top visible candidates rescored by a configured embedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from llm_stages_world import NAMESPACE, RecordedChat, ask, outcome, replies, write_corpus

from graphctx.context import default_token_counter
from graphctx.contract import ContextResponse, StageStatus
from graphctx.embed import Embedder, UniversalSentenceEncoderEmbedder
from graphctx.embed.openai_compatible import OpenAICompatibleEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.assist.embedding_rerank import EmbeddingReranker
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

QUERY = "I was sacked by my employer, what now?"


@pytest.fixture(scope="module")
def store_path(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Path:
    root = tmp_path_factory.mktemp("embedding-rerank")
    path = root / "store.sqlite"
    store = SqliteGraphStore(path)
    with ContextProvider(
        store, embedder, default_token_counter(), CallerAssertedGrants()
    ).open() as provider:
        provider.ingest_path(write_corpus(root / "docs"), namespace=NAMESPACE)
    return path


def answer(path: Path, embedder: Embedder, reranker: EmbeddingReranker | None) -> ContextResponse:
    with ContextProvider(
        SqliteGraphStore(path),
        embedder,
        default_token_counter(),
        CallerAssertedGrants(),
        embedding_rerank=reranker,
    ).open() as provider:
        return ask(provider, QUERY)


def test_the_top_candidates_are_ordered_by_the_rerank_embedders_cosine(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    e5 = pytest.importorskip("graphctx.embed.e5").E5Embedder()
    without = answer(store_path, embedder, None)
    reranked = answer(store_path, embedder, EmbeddingReranker(e5, top_n=4))
    top = without.items[:4]
    wanted = e5.embed_query(QUERY)
    cosines = e5.embed_documents([i.content for i in top]) @ wanted
    expected = [top[i].chunk_id for i in np.argsort(-cosines, kind="stable")]
    assert expected != [i.chunk_id for i in top]  # the rescoring does reorder here
    assert [i.chunk_id for i in reranked.items[:4]] == expected
    assert [i.chunk_id for i in reranked.items[4:]] == [i.chunk_id for i in without.items[4:]]
    (model,) = reranked.manifest.model_stages
    assert model.applied
    assert model.model == e5.name
    assert model.order == expected


def test_a_failing_rerank_embedder_is_skipped_and_changes_nothing(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    with RecordedChat(replies()) as server:  # it serves no /embeddings: HTTP 404
        failing = OpenAICompatibleEmbedder(server.url, "none", dimension=8, max_retries=0)
        without = answer(store_path, embedder, None)
        with_stage = answer(store_path, embedder, EmbeddingReranker(failing))
    assert outcome(with_stage) == outcome(without)
    (report,) = [s for s in with_stage.manifest.stages if s.stage == "embedding.rerank"]
    assert report.status is StageStatus.FAILED
