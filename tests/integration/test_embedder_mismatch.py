"""A namespace answers only the embedder that wrote it: query and ingest, on both backends."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode, UnanswerableReason
from graphctx.embed import E5Embedder, Embedder, UniversalSentenceEncoderEmbedder
from graphctx.errors import EmbedderMismatchError
from graphctx.ingest.pipeline import embed_chunks
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.namespace_embedder import EmbedderRecord
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.port import GraphStore
from graphctx.store.records import NewChunk, NewDocument
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import make_document

USE = "use-multilingual-v3 (512 dims)"
E5 = "multilingual-e5-small-q4 (384 dims)"
TIMEOUT_MS = 30_000  # the cores are shared; e5 embeds a query in well under a second alone
TEXT = "Restart the payment gateway with the runbook: drain traffic, then restart the pods."


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    embedder = E5Embedder()
    embedder.open()
    return embedder


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """An unopened store of each backend (the providers open and close it)."""
    if request.param == "sqlite":
        yield SqliteGraphStore(tmp_path / "store.sqlite")
        return
    server: Any = request.getfixturevalue("neo4j_server")
    yield Neo4jGraphStore(server.uri, server.auth, server.database)


@pytest.fixture
def namespace() -> str:
    return "emb" + uuid.uuid4().hex[:10]


def _provider(store: GraphStore, embedder: Embedder) -> ContextProvider:
    return ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())


def _ingest(provider: ContextProvider, namespace: str, tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}.md").write_text(f"# {name}\n\n{TEXT}\n", "utf-8")
    provider.ingest_path(folder, namespace=namespace, scopes=["eng"])


def _ask(namespace: str, mode: RetrievalMode = RetrievalMode.AUTO) -> ContextRequest:
    return ContextRequest(
        query="how do I restart the payment gateway?",
        principal_id="sam",
        allowed_scopes=["eng"],
        namespace=namespace,
        retrieval_mode=mode,
        timeout_ms=TIMEOUT_MS,
    )


@pytest.mark.parametrize("mode", [RetrievalMode.AUTO, RetrievalMode.HYBRID, RetrievalMode.GRAPH])
def test_a_query_with_another_embedder_is_refused_naming_both(
    store: GraphStore,
    namespace: str,
    tmp_path: Path,
    embedder: UniversalSentenceEncoderEmbedder,
    e5: E5Embedder,
    mode: RetrievalMode,
) -> None:
    with _provider(store, embedder).open() as written_with_use:
        _ingest(written_with_use, namespace, tmp_path, "runbook")
        assert written_with_use.retrieve(_ask(namespace, mode)).answerable
    with (
        _provider(store, e5).open() as asked_with_e5,
        pytest.raises(EmbedderMismatchError) as refused,
    ):
        asked_with_e5.retrieve(_ask(namespace, mode))
    assert (refused.value.code, refused.value.stored, refused.value.requested) == (
        "embedder_mismatch",
        USE,
        "multilingual-e5-small-q4",
    )
    assert USE in refused.value.message
    assert "multilingual-e5-small-q4" in refused.value.message


def test_a_query_with_another_embedder_of_the_same_dimension_is_refused(
    store: GraphStore, namespace: str, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    """Vectors of the same length from another model would be scored without complaint."""
    document = make_document(namespace, "runbook", TEXT, {"eng"})
    source = SourceDocument("runbook.md", MediaType.MARKDOWN, TEXT, DocumentMetadata())
    chunks = embed_chunks(source, embedder)  # 512-d, written under another model's name
    with _provider(store, embedder).open() as provider:
        _write(provider, document, chunks, "another-512d-model")
        with pytest.raises(EmbedderMismatchError) as refused:
            provider.retrieve(_ask(namespace))
    assert refused.value.stored == "another-512d-model (512 dims)"


def test_an_ingest_with_another_embedder_is_refused_before_anything_is_written(
    store: GraphStore,
    namespace: str,
    tmp_path: Path,
    embedder: UniversalSentenceEncoderEmbedder,
    e5: E5Embedder,
) -> None:
    with _provider(store, embedder).open() as written_with_use:
        _ingest(written_with_use, namespace, tmp_path, "runbook")
    with _provider(store, e5).open() as e5_provider:
        with pytest.raises(EmbedderMismatchError) as refused:
            _ingest(e5_provider, namespace, tmp_path, "second")
        documents = e5_provider.list_documents(namespace, ["eng"])
    assert (refused.value.stored, refused.value.requested) == (USE, "multilingual-e5-small-q4")
    assert [d.document_id for d in documents] == ["runbook.md"]


def test_a_namespace_without_a_record_answers_any_embedder_and_adopts_the_first_writer(
    store: GraphStore, namespace: str, tmp_path: Path, e5: E5Embedder
) -> None:
    with _provider(store, e5).open() as provider:
        empty = provider.retrieve(_ask(namespace))
        assert (empty.answerable, empty.reason) == (False, UnanswerableReason.NO_EVIDENCE)
        _ingest(provider, namespace, tmp_path, "runbook")
        record = provider._run(provider.store.namespace_embedder(namespace))
        bundle = provider.retrieve(_ask(namespace))
    assert record == EmbedderRecord("multilingual-e5-small-q4", 384)
    assert bundle.answerable
    assert bundle.manifest.embedder == "multilingual-e5-small-q4"
    assert [item.document_id for item in bundle.items][:1] == ["runbook.md"]


def _write(
    provider: ContextProvider, document: NewDocument, chunks: list[NewChunk], name: str
) -> None:
    provider._run(provider.store.write_document(document, chunks, name))
