"""``graphctx eval``: recall@k and MRR of each retrieval route, side by side, in one run.

For every question the same store answers five ways, all through the shared retrieval code
(nothing here re-implements a retriever):

- ``fulltext`` / ``vector``: one retriever alone;
- ``hybrid``: both, fused by reciprocal rank (the provider's default);
- ``hybrid+graph``: hybrid anchors and the entities the question names, expanded through the
  graph (retrieval mode ``graph``);
- ``auto``: what the router chooses on its own (rules + ontology augmentation);
- with the optional LLM stages configured, one column per stage (:mod:`.llm_columns`).

Rankings are compared at document level (a document counts once, at its best chunk).
Recall@k = |gold ∩ top-k| / |gold|, averaged over questions; MRR = 1 / rank of the first gold
document (0 when none is in the ranking). The graph comes from the offline extractor
(references, title/dictionary mentions); then the offline concepts (structure, defined terms,
citation clusters) are added and the graph methods run again (``+concepts``), unless the
corpus gave no concept; then the shared-name entities (off in ingest by default) are added and
they run once more (``+names``, cumulative). The concept set's shape is reported with the
scores, and with it how many gold document pairs share a concept: a property of the concepts,
whatever the scoring.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm import tqdm

from graphctx.contract import NodeKind, RetrievalMode, RetrieverName
from graphctx.embed import Embedder
from graphctx.eval.datasets import EvalSet, source_documents
from graphctx.eval.llm_columns import (
    EMBEDDING_RERANK_COLUMN,
    StageTally,
    embedding_reranked,
    llm_rankings,
)
from graphctx.ingest.extract import ExtractionInput, ExtractionReport, OfflineExtractor
from graphctx.ingest.extract.offline import title_names
from graphctx.ingest.extract.shared_names import shared_name_nodes
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.retrieve.assist import LlmStages
from graphctx.retrieve.assist.embedding_rerank import EmbeddingReranker
from graphctx.retrieve.candidates import gather_candidates
from graphctx.retrieve.entities import query_keys
from graphctx.retrieve.fusion import fuse_lists
from graphctx.retrieve.graph_ranking import rank_with_graph
from graphctx.retrieve.question_type import classify_question
from graphctx.retrieve.routing import plan_route
from graphctx.store.port import GraphStore
from graphctx.store.records import ChunkHit
from graphctx.store.sqlite.store import SqliteGraphStore

__all__ = [
    "DEFAULT_KS",
    "METHODS",
    "DatasetResult",
    "MethodScores",
    "concept_gold_pairs",
    "evaluate_set",
    "score",
]

METHODS = ("fulltext", "vector", "hybrid", "hybrid+graph", "auto")
GRAPH_METHODS = ("hybrid+graph", "auto")
DEFAULT_KS = (2, 5, 10)
EVAL_NAMESPACE = "eval"
EVAL_SCOPES = frozenset({"eval"})
QUESTION_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class MethodScores:
    recall: dict[int, float]
    mrr: float
    questions: int


@dataclass
class DatasetResult:
    name: str
    description: str
    documents: int
    questions: int
    methods: dict[str, MethodScores] = field(default_factory=dict)
    graph: dict[str, object] = field(default_factory=dict)
    graph_only_gold: dict[str, int] = field(default_factory=dict)  # gold in top-5 via graph only
    routed_to_graph: int = 0  # questions for which auto chose the graph
    seconds: dict[str, float] = field(default_factory=dict)
    llm_stages: dict[str, StageTally] = field(default_factory=dict)  # when configured


def score(
    rankings: Sequence[Sequence[str]], golds: Sequence[Sequence[str]], ks: Sequence[int]
) -> MethodScores:
    """Recall@k and MRR of document rankings against gold document ids."""
    recall = {k: 0.0 for k in ks}
    mrr = 0.0
    for ranking, gold in zip(rankings, golds, strict=True):
        wanted = set(gold)
        for k in ks:
            recall[k] += len(wanted & set(ranking[:k])) / len(wanted)
        first = next((i for i, doc in enumerate(ranking, start=1) if doc in wanted), None)
        mrr += 0.0 if first is None else 1.0 / first
    n = max(1, len(golds))
    return MethodScores({k: v / n for k, v in recall.items()}, mrr / n, len(golds))


def _documents(hits: Sequence[ChunkHit], document_of: dict[str, str]) -> list[str]:
    seen: dict[str, None] = {}
    for hit in hits:
        doc = document_of.get(hit.chunk_id)
        if doc is not None:
            seen.setdefault(doc, None)
    return list(seen)


async def _ingest(
    store: GraphStore, embedder: Embedder, eval_set: EvalSet
) -> tuple[dict[str, str], ExtractionReport | None]:
    sources = source_documents(eval_set, lambda _: EVAL_SCOPES)
    report = await ingest_sources(
        store,
        embedder,
        sources,
        Path("."),
        IngestDefaults(namespace=EVAL_NAMESPACE),
        progress=sys.stderr.isatty(),
        extractor=OfflineExtractor(),
    )
    document_of: dict[str, str] = {}
    for doc in eval_set.documents:
        for chunk in await store.document_chunks(EVAL_NAMESPACE, doc.document_id):
            document_of[chunk.chunk_id] = doc.document_id
    return document_of, report.graph


async def _extraction_inputs(store: GraphStore, eval_set: EvalSet) -> list[ExtractionInput]:
    inputs = []
    for doc in eval_set.documents:
        chunks = await store.document_chunks(EVAL_NAMESPACE, doc.document_id)
        inputs.append(
            ExtractionInput(
                doc.document_id,
                doc.title,
                doc.metadata,
                None,
                tuple((c.chunk_id, c.text) for c in chunks),
            )
        )
    return inputs


async def _add_shared_names(store: GraphStore, eval_set: EvalSet) -> int:
    """Write the shared-name entities (off by default in ingest); how many there are."""
    inputs = await _extraction_inputs(store, eval_set)
    nodes = shared_name_nodes(inputs, title_names(inputs))
    if nodes:
        await store.write_graph(EVAL_NAMESPACE, nodes, [])
    return len(nodes)


async def _add_concepts(
    store: GraphStore, eval_set: EvalSet, document_of: dict[str, str]
) -> dict[str, object]:
    """Write the offline concepts of the whole set; their shape and gold-pair coverage."""
    inputs = await _extraction_inputs(store, eval_set)
    extractor = OfflineExtractor(titles_as_entities=False, references=False, concepts=True)
    nodes, _, report = extractor.build(inputs)
    concepts = [n for n in nodes if n.kind is NodeKind.CONCEPT]
    if concepts:
        await store.write_graph(EVAL_NAMESPACE, concepts, [])
    members = [{document_of[c] for c in n.supporting_chunk_ids} for n in concepts]
    found: dict[str, object] = {
        "shape": None if report.concept_shape is None else asdict(report.concept_shape)
    }
    found.update(concept_gold_pairs(members, [q.gold for q in eval_set.questions]))
    found["summary"] = report.concept_shape.summary() if report.concept_shape else "no items"
    return found


def concept_gold_pairs(
    members: Sequence[set[str]], golds: Sequence[Sequence[str]]
) -> dict[str, float]:
    """How many gold document pairs (two gold documents of one question) share a concept,
    and how many other documents a document shares a concept with (what a concept walk can
    reach from it, right or wrong)."""
    pairs = {tuple(sorted((a, b))) for gold in golds for a in gold for b in gold if a < b}
    shared = sum(1 for a, b in pairs if any(a in m and b in m for m in members))
    neighbours: dict[str, set[str]] = {}
    for group in members:
        for doc in group:
            neighbours.setdefault(doc, set()).update(group - {doc})
    reach = [len(n) for n in neighbours.values()]
    return {
        "gold_pairs": len(pairs),
        "gold_pairs_sharing_concept": round(shared / len(pairs), 4) if pairs else 0.0,
        "co_members_per_member": round(sum(reach) / len(reach), 2) if reach else 0.0,
    }


async def _rank(
    store: GraphStore,
    embedder: Embedder,
    query: str,
    document_of: dict[str, str],
    graph_only: bool,
    llm: tuple[LlmStages | None, EmbeddingReranker | None, dict[str, StageTally]] | None = None,
) -> tuple[dict[str, list[str]], bool]:
    deadline = time.monotonic() + QUESTION_TIMEOUT_S
    found = await gather_candidates(
        store,
        embedder,
        EVAL_NAMESPACE,
        query,
        EVAL_SCOPES,
        [RetrieverName.FULLTEXT, RetrieverName.VECTOR],
        deadline,
    )
    ranked = found.ranked
    hybrid = fuse_lists(ranked).candidates
    question = classify_question(query)
    matches = await store.lookup_entities(
        EVAL_NAMESPACE, query_keys(query), EVAL_SCOPES, 20, deadline
    )
    rankings: dict[str, list[str]] = {}
    if not graph_only:
        for method, hits in (
            ("fulltext", ranked.get(RetrieverName.FULLTEXT, [])),
            ("vector", ranked.get(RetrieverName.VECTOR, [])),
        ):
            rankings[method] = _documents(hits, document_of)
        rankings["hybrid"] = _documents(
            [ChunkHit(c.chunk_id, c.fused) for c in hybrid], document_of
        )
    routed = False
    for method, mode in (("hybrid+graph", RetrievalMode.GRAPH), ("auto", RetrievalMode.AUTO)):
        route = plan_route(mode, question=question, entities=matches)
        fused = hybrid
        if RetrieverName.GRAPH in route.retrievers:
            graph = await rank_with_graph(
                store, EVAL_NAMESPACE, hybrid, matches, question, EVAL_SCOPES, deadline, mode
            )
            fused = graph.candidates
            routed = routed or (graph.joined and mode is RetrievalMode.AUTO)
        rankings[method] = _documents([ChunkHit(c.chunk_id, c.fused) for c in fused], document_of)
    if llm is not None and not graph_only:
        stages, reranker, tallies = llm
        columns = {} if stages is None else await llm_rankings(
            stages, store, embedder, EVAL_NAMESPACE, EVAL_SCOPES, query, found, question,
            matches, tallies,
        )  # fmt: skip
        if reranker is not None:
            tally = tallies.setdefault("embedding-rerank", StageTally())
            columns[EMBEDDING_RERANK_COLUMN] = await embedding_reranked(
                reranker, store, EVAL_NAMESPACE, EVAL_SCOPES, query, found, tally
            )
        for method, candidates in columns.items():
            rankings[method] = _documents(
                [ChunkHit(c.chunk_id, c.fused) for c in candidates], document_of
            )
    return rankings, routed


async def _run_questions(
    store: GraphStore,
    embedder: Embedder,
    eval_set: EvalSet,
    document_of: dict[str, str],
    result: DatasetResult,
    ks: Sequence[int],
    suffix: str = "",
    llm_stages: LlmStages | None = None,
    reranker: EmbeddingReranker | None = None,
) -> None:
    collected: dict[str, list[list[str]]] = {}
    routed = 0
    graph_only = bool(suffix)
    quiet = not sys.stderr.isatty()
    for question in tqdm(
        eval_set.questions, desc=f"eval {eval_set.name}{suffix}", leave=False, disable=quiet
    ):
        llm = (
            None
            if llm_stages is None and reranker is None
            else (llm_stages, reranker, result.llm_stages)
        )
        rankings, to_graph = await _rank(
            store, embedder, question.question, document_of, graph_only, llm
        )
        routed += to_graph
        for method, ranking in rankings.items():
            collected.setdefault(method, []).append(ranking)
    golds = [q.gold for q in eval_set.questions]
    for method, per_question in collected.items():
        result.methods[method + suffix] = score(per_question, golds, ks)
    if not suffix:
        result.routed_to_graph = routed
        hybrid = collected["hybrid"]
        for method in GRAPH_METHODS:
            result.graph_only_gold[method] = sum(
                len((set(g) & set(r[:5])) - set(h[:5]))
                for g, r, h in zip(golds, collected[method], hybrid, strict=True)
            )


async def evaluate_set(
    eval_set: EvalSet,
    embedder: Embedder,
    ks: Sequence[int] = DEFAULT_KS,
    llm_stages: LlmStages | None = None,
    reranker: EmbeddingReranker | None = None,
) -> DatasetResult:
    """Ingest the set into a fresh embedded store and score every method on it (and, with
    ``llm_stages``, a column per configured stage on the first pass)."""
    result = DatasetResult(
        eval_set.name, eval_set.description, len(eval_set.documents), len(eval_set.questions)
    )
    with tempfile.TemporaryDirectory(prefix="graphctx-eval-") as tmp:
        store = SqliteGraphStore(Path(tmp) / "eval.sqlite")
        await store.open()
        try:
            started = time.monotonic()
            document_of, extraction = await _ingest(store, embedder, eval_set)
            result.seconds["ingest"] = round(time.monotonic() - started, 1)
            if extraction is not None:
                result.graph["offline"] = _report_dict(extraction)
            started = time.monotonic()
            await _run_questions(
                store,
                embedder,
                eval_set,
                document_of,
                result,
                ks,
                llm_stages=llm_stages,
                reranker=reranker,
            )
            result.seconds["questions"] = round(time.monotonic() - started, 1)
            concepts = await _add_concepts(store, eval_set, document_of)
            result.graph["concepts"] = concepts
            shape = concepts["shape"]
            if isinstance(shape, dict) and shape.get("concepts"):
                await _run_questions(
                    store, embedder, eval_set, document_of, result, ks, suffix=" +concepts"
                )
            names = await _add_shared_names(store, eval_set)
            result.graph["shared_names"] = names
            if names:
                await _run_questions(
                    store, embedder, eval_set, document_of, result, ks, suffix=" +names"
                )
        finally:
            await store.close()
    return result


def _report_dict(report: ExtractionReport) -> dict[str, object]:
    return {
        "document_nodes": report.document_nodes,
        "references": report.references,
        "mentions": report.mentions,
        "concepts": report.concepts,
    }


def run_evaluation(
    sets: Sequence[EvalSet],
    embedder: Embedder,
    ks: Sequence[int] = DEFAULT_KS,
    llm_stages: LlmStages | None = None,
    reranker: EmbeddingReranker | None = None,
) -> list[DatasetResult]:
    return [asyncio.run(evaluate_set(s, embedder, ks, llm_stages, reranker)) for s in sets]
