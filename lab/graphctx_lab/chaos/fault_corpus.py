"""The store the deadline scenarios break: the bundled demo corpus, ingested with its graph.

It is the package's own corpus (no shared data needed): 25 documents in four scopes, entity
mentions and a declared service graph, so every pipeline stage (entity lookup, both
retrievers, graph expansion, fetch, output gate) has real work to do. The scenarios ask as
``sam`` (eng, all-staff); ``hr`` and ``oncall`` evidence is what must never leak.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from graphctx.context import TokenCounter, default_token_counter
from graphctx.contract import ContextRequest, ContextResponse, EvidenceItem, RetrievalMode
from graphctx.demo.run import corpus_path, graph_path, load_script
from graphctx.embed import Embedder, UniversalSentenceEncoderEmbedder
from graphctx.ingest.extract import OfflineExtractor
from graphctx.ingest.graph_file import ingest_graph_file
from graphctx.ingest.pipeline import IngestDefaults, ingest_path
from graphctx.store.records import ChunkView
from graphctx.store.sqlite.store import SqliteGraphStore

__all__ = ["NAMESPACE", "PRINCIPAL_SCOPES", "DemoCorpus", "demo_corpus", "leaks_of"]

NAMESPACE = "chaos"
PRINCIPAL = "sam"
PRINCIPAL_SCOPES = frozenset({"eng", "all-staff"})
ALL_SCOPES = frozenset({"eng", "all-staff", "hr", "oncall"})


@dataclass(frozen=True)
class DemoCorpus:
    """An opened, ingested store plus what a trial needs to judge a response."""

    runner: asyncio.Runner
    store: SqliteGraphStore
    embedder: Embedder
    token_counter: TokenCounter
    chunks: dict[str, ChunkView]  # every chunk of the corpus, whatever its scopes
    queries: tuple[str, ...]

    def request(self, query: str, timeout_ms: int, mode: RetrievalMode) -> ContextRequest:
        return ContextRequest(
            query=query,
            principal_id=PRINCIPAL,
            allowed_scopes=sorted(PRINCIPAL_SCOPES),
            namespace=NAMESPACE,
            timeout_ms=timeout_ms,
            max_tokens=1200,
            retrieval_mode=mode,
        )


@contextmanager
def demo_corpus(workdir: Path) -> Iterator[DemoCorpus]:
    """Ingest the demo corpus into ``workdir/demo.sqlite``; close the store on exit."""
    store = SqliteGraphStore(workdir / "demo.sqlite")
    embedder = UniversalSentenceEncoderEmbedder()
    with asyncio.Runner() as runner:
        runner.run(store.open())
        try:
            defaults = IngestDefaults(namespace=NAMESPACE)
            report = runner.run(
                ingest_path(store, embedder, corpus_path(), defaults, extractor=OfflineExtractor())
            )
            if report.errors:
                raise RuntimeError(f"demo corpus did not ingest: {report.errors}")
            runner.run(ingest_graph_file(store, graph_path(), NAMESPACE))
            chunks = runner.run(_all_chunks(store))
            queries = tuple(q.query for q in load_script().questions)
            yield DemoCorpus(runner, store, embedder, default_token_counter(), chunks, queries)
        finally:
            runner.run(store.close())


async def _all_chunks(store: SqliteGraphStore) -> dict[str, ChunkView]:
    found: dict[str, ChunkView] = {}
    for summary in await store.list_documents(NAMESPACE, ALL_SCOPES):
        for view in await store.document_chunks(NAMESPACE, summary.document_id):
            found[view.chunk_id] = view
    return found


def leaks_of(corpus: DemoCorpus, response: ContextResponse) -> list[str]:
    """Items that are not exact, visible text of a stored chunk (empty when all is well)."""
    return [
        f"{item.citation_id} {item.chunk_id}: {problem}"
        for item in response.items
        if (problem := _problem(corpus.chunks.get(item.chunk_id), item)) is not None
    ]


def _problem(view: ChunkView | None, item: EvidenceItem) -> str | None:
    if view is None:
        return "not a chunk of the corpus"
    if not view.scopes & PRINCIPAL_SCOPES:
        return f"outside the principal's scopes ({sorted(view.scopes)})"
    start, end = item.span.start_char, item.span.end_char
    if not view.start_char <= start <= end <= view.end_char:
        return "span outside its chunk"
    if item.content != view.text[start - view.start_char : end - view.start_char]:
        return "content is not the chunk text at its span"
    return None
