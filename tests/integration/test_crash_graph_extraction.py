"""An ingest stopped between its documents and its graph is completed by the next run.

Graph extraction commits once per ingest, after the documents. A run killed in between left
the documents without a graph, and every later run found them unchanged and skipped them:
the graph never came. The next run now extracts documents whose latest version has none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from graphctx.embed import Embedder
from graphctx.ingest.extract.offline import OfflineExtractor
from graphctx.ingest.extract.port import ExtractionInput, GraphDraft, GraphExtractor
from graphctx.ingest.pipeline import IngestDefaults, ingest_path
from graphctx.store.records import WriteOutcome
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.chaos.ingest_corpus import CORPUS_NAMESPACE, DEFAULT_SCOPE, write_corpus
from graphctx_lab.chaos.sqlite_digest import read_snapshot

DEFAULTS = IngestDefaults(
    namespace=CORPUS_NAMESPACE, scopes=(DEFAULT_SCOPE,), source_uri_prefix="test://corpus"
)


class _Killed(Exception):
    """Stands for the process dying after the documents committed, before the graph."""


class _DiesBeforeTheGraph:
    def extract(self, documents: Sequence[ExtractionInput]) -> GraphDraft:
        raise _Killed


def _ingest(path: Path, corpus: Path, embedder: Embedder, extractor: GraphExtractor) -> list[str]:
    async def run() -> list[str]:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            report = await ingest_path(store, embedder, corpus, DEFAULTS, extractor=extractor)
            return [d.outcome.value for d in report.documents]
        finally:
            await store.close()

    return asyncio.run(run())


def test_rerun_after_a_stop_before_the_graph_converges_to_the_uninterrupted_graph(
    tmp_path: Path, embedder: Embedder
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, second_pass=False, documents=8)
    reference, store = tmp_path / "reference.sqlite", tmp_path / "store.sqlite"
    _ingest(reference, corpus, embedder, OfflineExtractor())
    with pytest.raises(_Killed):
        _ingest(store, corpus, embedder, _DiesBeforeTheGraph())
    outcomes = _ingest(store, corpus, embedder, OfflineExtractor())
    assert set(outcomes) == {WriteOutcome.UNCHANGED.value}
    assert read_snapshot(store).differences(read_snapshot(reference)) == []


def test_an_unchanged_document_with_its_graph_is_not_extracted_again(
    tmp_path: Path, embedder: Embedder
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, second_pass=False, documents=4)
    store = tmp_path / "store.sqlite"
    _ingest(store, corpus, embedder, OfflineExtractor())
    outcomes = _ingest(store, corpus, embedder, _DiesBeforeTheGraph())  # raises if it extracts
    assert outcomes == [WriteOutcome.UNCHANGED.value] * 4
