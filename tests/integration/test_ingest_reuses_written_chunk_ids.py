"""Graph extraction at ingest uses the chunk ids the document writes returned: nothing
written in the run is read back to build the extractor's input."""

from __future__ import annotations

import asyncio
from pathlib import Path

from graphctx.embed import Embedder
from graphctx.ingest.extract.offline import OfflineExtractor
from graphctx.ingest.pipeline import IngestDefaults, ingest_path
from graphctx.store.records import ChunkView
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.chaos.ingest_corpus import CORPUS_NAMESPACE, DEFAULT_SCOPE, write_corpus

DEFAULTS = IngestDefaults(
    namespace=CORPUS_NAMESPACE, scopes=(DEFAULT_SCOPE,), source_uri_prefix="test://corpus"
)


class _ReadsRecorded(SqliteGraphStore):
    """The real SQLite store, recording which documents' chunks were listed."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.listed: list[str] = []

    async def document_chunks(self, namespace: str, document_id: str) -> list[ChunkView]:
        self.listed.append(document_id)
        return await super().document_chunks(namespace, document_id)


def test_a_fresh_ingest_builds_its_graph_without_reading_its_chunks_back(
    tmp_path: Path, embedder: Embedder
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=3, second_pass=False, documents=5)

    async def run() -> tuple[list[str], int, dict[str, tuple[str, ...]]]:
        store = _ReadsRecorded(tmp_path / "store.sqlite")
        await store.open()
        try:
            report = await ingest_path(
                store, embedder, corpus, DEFAULTS, extractor=OfflineExtractor()
            )
            assert report.graph is not None
            listed, nodes = list(store.listed), report.graph.document_nodes
            chunks = {
                d.document_id: tuple(
                    c.chunk_id for c in await store.document_chunks(CORPUS_NAMESPACE, d.document_id)
                )
                for d in report.documents
            }
            return listed, nodes, chunks
        finally:
            await store.close()

    listed, document_nodes, chunks = asyncio.run(run())
    assert listed == []
    assert document_nodes == len(chunks) == 5
