"""The LlamaIndex retriever, run by LlamaIndex (``retrieve``, ``aretrieve``, a node
postprocessor), against a real ``graphctx serve`` and in-process."""

from __future__ import annotations

import asyncio

import pytest
from adapter_world import QUESTION, Sources
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.schema import MetadataMode, NodeRelationship, QueryBundle, TextNode

from graphctx.client import GraphctxClient
from graphctx.errors import AccessDeniedError, InvalidRequestError
from graphctx.integrations.llamaindex import GraphctxRetriever
from graphctx.provider import ContextProvider
from graphctx.testing.service import ALPHA_SECRET_MARKER, Harness


def retriever_for(sources: Sources, principal: str, scopes: list[str]) -> GraphctxRetriever:
    return GraphctxRetriever(
        sources.source(principal),
        principal_id=principal,
        scopes=scopes,
        namespace="alpha",
        max_tokens=800,
    )


def test_retrieve_answers_one_node_per_item_in_bundle_order(sources: Sources) -> None:
    retriever = retriever_for(sources, "ada", ["public", "secret"])
    nodes = retriever.retrieve(QUESTION)
    bundle = retriever.bundle(QUESTION)
    assert [n.node.node_id for n in nodes] == [item.chunk_id for item in bundle.items]
    assert {n.node.metadata["document_id"] for n in nodes} == {"alpha-runbook", "alpha-payroll"}
    for rank, (scored, item) in enumerate(zip(nodes, bundle.items, strict=True), start=1):
        node = scored.node
        assert isinstance(node, TextNode)
        assert node.text == item.content
        assert (node.start_char_idx, node.end_char_idx) == (
            item.span.start_char,
            item.span.end_char,
        )
        assert node.relationships[NodeRelationship.SOURCE].node_id == item.document_id  # type: ignore[union-attr]
        assert node.metadata["citation_id"] == item.citation_id
        assert node.metadata["score_fused"] == item.retrieval_scores.fused
        assert scored.score == 1.0 / rank


def test_the_model_reads_the_citation_source_and_freshness_next_to_the_text(
    sources: Sources,
) -> None:
    scored = retriever_for(sources, "rita", ["public"]).retrieve(QUESTION)[0]
    shown = scored.node.get_content(metadata_mode=MetadataMode.LLM)
    assert shown.startswith("citation_id: S1\nsource_uri: ")
    assert "freshness: " in shown
    assert "score_fused" not in shown
    assert scored.node.get_content(metadata_mode=MetadataMode.EMBED) == scored.node.get_content()


def test_a_postprocessor_sorting_by_score_keeps_graphctxs_order(sources: Sources) -> None:
    retriever = retriever_for(sources, "ada", ["public", "secret"])
    nodes = retriever.retrieve(QUESTION)
    kept = SimilarityPostprocessor(similarity_cutoff=0.0).postprocess_nodes(
        sorted(nodes, key=lambda n: n.score or 0.0, reverse=True)
    )
    assert [n.node.node_id for n in kept] == [n.node.node_id for n in nodes]


def test_aretrieve_answers_what_retrieve_does(sources: Sources) -> None:
    retriever = retriever_for(sources, "rita", ["public"])
    nodes = asyncio.run(retriever.aretrieve(QueryBundle(QUESTION)))
    assert [n.node.node_id for n in nodes] == [n.node.node_id for n in retriever.retrieve(QUESTION)]


def test_the_retriever_never_widens_the_principals_scopes(sources: Sources) -> None:
    widened = retriever_for(sources, "rita", ["public", "secret"]).retrieve(QUESTION)
    assert {n.node.metadata["document_id"] for n in widened} == {"alpha-runbook"}
    assert all(ALPHA_SECRET_MARKER not in n.node.get_content() for n in widened)


def test_a_refused_request_raises_the_typed_error(sources: Sources) -> None:
    with pytest.raises(AccessDeniedError) as raised:
        retriever_for(sources, "rita", ["secret"]).retrieve(QUESTION)
    assert raised.value.code == "no_effective_scopes"


def test_over_a_client_the_key_decides_principal_and_scopes(harness: Harness) -> None:
    seen = {}
    for key in ("ada", "rita"):
        with GraphctxClient(harness.url, api_key=harness.keys[key], namespace="alpha") as client:
            nodes = GraphctxRetriever(client).retrieve(QUESTION)
        seen[key] = {str(n.node.metadata["document_id"]) for n in nodes}
    assert seen == {"ada": {"alpha-runbook", "alpha-payroll"}, "rita": {"alpha-runbook"}}


def test_in_process_the_principal_and_scopes_are_needed(in_process: ContextProvider) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        GraphctxRetriever(in_process, scopes=["public"], namespace="alpha")
    assert refused.value.field == "principal_id"
