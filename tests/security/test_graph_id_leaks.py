"""Issue 13 item 5: a hidden document's node id never reaches a reader through the graph.

The offline extractor names a document's node ``doc:<document_id>`` and links every chunk that
mentions the document's title to it. Before the fix an ``eng`` chunk mentioning an ``hr`` memo's
title made the memo's node visible, so its id (a telling path) came back in
``provenance_path``, route reasons and the ``route.entities`` count. Now a node with home
support (its own chunks) is visible only through a visible home chunk.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_leak_world import HIDDEN_ID, HIDDEN_MARKER, NAMESPACE, QUERIES, write_world

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.ingest.extract import OfflineExtractor
from graphctx.provider import ContextProvider


@pytest.fixture
def world(provider: ContextProvider, tmp_path: Path) -> ContextProvider:
    report = provider.ingest_path(
        write_world(tmp_path / "docs"), namespace=NAMESPACE, extractor=OfflineExtractor()
    )
    assert (report.errors, report.graph is not None) == ([], True)
    return provider


@pytest.mark.parametrize("mode", [RetrievalMode.GRAPH, RetrievalMode.AUTO])
@pytest.mark.parametrize("query", QUERIES)
def test_a_hidden_documents_id_never_appears_in_an_eng_readers_response(
    world: ContextProvider, mode: RetrievalMode, query: str
) -> None:
    response = world.retrieve(
        ContextRequest(
            query=query,
            principal_id="eng-reader",
            allowed_scopes=["eng"],
            namespace=NAMESPACE,
            retrieval_mode=mode,
        )
    )
    serialized = response.model_dump_json()
    assert response.items, "the eng documents themselves are found"
    assert HIDDEN_ID not in serialized
    assert HIDDEN_MARKER not in serialized


def test_the_hr_reader_still_reaches_the_memo_through_its_title(world: ContextProvider) -> None:
    response = world.retrieve(
        ContextRequest(
            query=QUERIES[0],
            principal_id="hr-reader",
            allowed_scopes=["eng", "hr"],
            namespace=NAMESPACE,
            retrieval_mode=RetrievalMode.GRAPH,
        )
    )
    steps = {step.id for item in response.items for step in item.provenance_path}
    assert f"doc:{HIDDEN_ID}" in steps
