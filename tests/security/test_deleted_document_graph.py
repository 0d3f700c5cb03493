"""A deleted document leaves nothing of itself in what retrieval serves (issue 13, item 7).

With the offline extractor, every document gets a document node (``doc:<id>``, named by its
title), and other documents' chunks that mention the title link to it. Deleting the document
must take that node with it: its id and title lookup key may not come back in provenance
paths, route reasons or the manifest of any retrieval mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.ingest.extract.offline import OfflineExtractor
from graphctx.provider import ContextProvider

DOCS = {
    "nightjar.md": "---\ndocument_id: nightjar-memo\ntitle: Project Nightjar layoffs\n---\n"
    "The kafka team shrinks in the spring; the memo lists who goes.\n",
    "notes.md": "---\ndocument_id: team-notes\ntitle: Team notes\n---\n"
    "Our kafka notes: read Project Nightjar layoffs before planning the kafka upgrade.\n",
}
TRACES = ("nightjar-memo", "project nightjar layoffs")  # the id and the title's lookup key


def _responses(provider: ContextProvider) -> list[str]:
    return [
        provider.retrieve(
            ContextRequest(
                query=query,
                principal_id="p",
                allowed_scopes=["eng"],
                namespace="n",
                retrieval_mode=mode,
                max_tokens=800,
            )
        ).model_dump_json()
        for mode in (RetrievalMode.AUTO, RetrievalMode.GRAPH, RetrievalMode.HYBRID)
        for query in ("Project Nightjar layoffs", "kafka upgrade notes")
    ]


@pytest.mark.parametrize("trace", TRACES)
def test_nothing_of_a_deleted_document_is_served_through_the_graph(
    provider: ContextProvider, tmp_path: Path, trace: str
) -> None:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = provider.ingest_path(
        tmp_path, namespace="n", scopes=["eng"], extractor=OfflineExtractor()
    )
    assert not report.errors
    assert any(trace in body for body in _responses(provider))  # served while it exists

    assert provider.delete_document("n", "nightjar-memo") == 1

    assert [body for body in _responses(provider) if trace in body] == []
