"""The graph walk repeated from the merged ranking's anchors reaches a bridge's far end, and
is not repeated from anchors it has walked from already."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from graphctx.contract import RetrievalMode, RetrieverName
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.eval.datasets import EvalDocument, EvalSet, source_documents
from graphctx.ingest.extract import OfflineExtractor
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.retrieve.candidates import gather_candidates
from graphctx.retrieve.entities import query_keys
from graphctx.retrieve.expansion import expand_graph, policy_for, walk_anchors
from graphctx.retrieve.fusion import FusedCandidate, fuse_lists, merge_graph
from graphctx.retrieve.graph_ranking import PROPAGATION_ROUNDS, rank_with_graph
from graphctx.retrieve.question_type import classify_question
from graphctx.store.sqlite.store import SqliteGraphStore

NS = "chain"
SCOPES = frozenset({"chain"})
# The question's words are in "Harbour Lights"; it names the director, whose page names
# his birthplace: the birthplace's page shares no word with the question.
DOCS = (
    EvalDocument(
        "film",
        "Harbour Lights",
        "Harbour Lights is a 1963 drama film about a lighthouse keeper, directed by Tomas Brek.",
    ),
    EvalDocument(
        "director",
        "Tomas Brek",
        "Tomas Brek was a painter and drama director who grew up in Veldenhof.",
    ),
    EvalDocument(
        "town",
        "Veldenhof",
        "Veldenhof: market town, river Aller, Gothic church.",
    ),
    *(
        EvalDocument(f"other-{i}", f"Other {i}", f"An unrelated note number {i} about gardens.")
        for i in range(30)
    ),
)
QUESTION = "Where was the director of the drama film Harbour Lights about a lighthouse keeper born?"
# Two pages that name each other, and a question whose words are in both: both are the first
# walk's anchors, and what it reaches is each of them again.
PAIR = (
    EvalDocument("quay", "Kestrel Quay", "Kestrel Quay, a stone harbour, was built by Ada Wren."),
    EvalDocument("engineer", "Ada Wren", "Ada Wren built Kestrel Quay, a stone harbour."),
    *(
        EvalDocument(f"other-{i}", f"Other {i}", f"A note number {i} about gardens by a harbour.")
        for i in range(30)
    ),
)
BOTH = "Did Ada Wren build the stone harbour Kestrel Quay?"


async def _ingest(
    store: SqliteGraphStore,
    embedder: UniversalSentenceEncoderEmbedder,
    docs: tuple[EvalDocument, ...] = DOCS,
) -> None:
    sources = source_documents(EvalSet("chain", "", docs, ()), lambda _: SCOPES)
    await ingest_sources(
        store, embedder, sources, Path("."), IngestDefaults(namespace=NS),
        extractor=OfflineExtractor(),
    )  # fmt: skip


async def _fused(
    store: SqliteGraphStore, embedder: UniversalSentenceEncoderEmbedder, query: str
) -> list[FusedCandidate]:
    found = await gather_candidates(
        store, embedder, NS, query, SCOPES, [RetrieverName.FULLTEXT, RetrieverName.VECTOR],
        time.monotonic() + 30,
    )  # fmt: skip
    return fuse_lists(found.ranked).candidates


async def _walks(store: SqliteGraphStore, embedder: UniversalSentenceEncoderEmbedder) -> None:
    await _ingest(store, embedder)
    deadline = time.monotonic() + 30
    fused = await _fused(store, embedder, QUESTION)
    question = classify_question(QUESTION)
    entities = await store.lookup_entities(NS, query_keys(QUESTION), SCOPES, 20, deadline)
    doc_of = {
        chunk.chunk_id: doc.document_id
        for doc in DOCS
        for chunk in await store.document_chunks(NS, doc.document_id)
    }
    assert doc_of[fused[0].chunk_id] == "film"
    town = {c for c, d in doc_of.items() if d == "town"}

    one = await expand_graph(store, NS, fused, [], question, SCOPES, deadline)
    assert not town & set(one.scores), "one walk from the question's hits stops at the director"

    ranking = await rank_with_graph(
        store, NS, fused, entities, question, SCOPES, deadline, RetrievalMode.GRAPH
    )
    assert ranking.joined
    top = [doc_of[c.chunk_id] for c in ranking.candidates]
    assert list(dict.fromkeys(top))[:3] == ["film", "director", "town"]
    reached = next(c for c in ranking.candidates if c.chunk_id in town)
    assert RetrieverName.GRAPH in reached.scores
    assert reached.chunk_id in ranking.expansion.paths  # the manifest can say how
    assert "walk 2:" in (ranking.expansion.report.detail or "")


async def _no_repeat(store: SqliteGraphStore, embedder: UniversalSentenceEncoderEmbedder) -> None:
    await _ingest(store, embedder, PAIR)
    deadline = time.monotonic() + 30
    fused = await _fused(store, embedder, BOTH)
    question = classify_question(BOTH)
    one = await expand_graph(store, NS, fused, [], question, SCOPES, deadline)
    restart = 1.0 - policy_for(question).hop_decay
    merged = merge_graph(fused, one.scores, restart=dict.fromkeys(one.anchors, restart))
    assert len(one.anchors) == 2
    assert set(walk_anchors(merged, [], question)) <= set(one.anchors)

    ranking = await rank_with_graph(
        store, NS, fused, [], question, SCOPES, deadline, RetrievalMode.GRAPH
    )
    assert ranking.joined
    assert "walk 2:" not in (ranking.expansion.report.detail or "")
    assert ranking.candidates == merged  # the same propagation is not added twice


def _in_store(
    path: Path,
    embedder: UniversalSentenceEncoderEmbedder,
    check: Callable[[SqliteGraphStore, UniversalSentenceEncoderEmbedder], Awaitable[None]],
) -> None:
    async def run() -> None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            await check(store, embedder)
        finally:
            await store.close()

    asyncio.run(run())


def test_the_second_walk_reaches_the_bridge_documents_neighbour(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    assert PROPAGATION_ROUNDS == 2
    _in_store(tmp_path / "chain.sqlite", embedder, _walks)


def test_no_second_walk_from_the_anchors_the_first_walked_from(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    _in_store(tmp_path / "chain.sqlite", embedder, _no_repeat)
