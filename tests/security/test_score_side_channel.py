"""Scores never reveal hidden documents: full-text BM25 depends on index-wide statistics (over
every project and scope), so the bundle reports ranks among visible hits instead."""

from __future__ import annotations

from pathlib import Path

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.provider import ContextProvider


def scores_for(provider: ContextProvider) -> list[tuple[str, float | None, float]]:
    response = provider.retrieve(
        ContextRequest(
            query="zirconium ledger",
            principal_id="eve",
            allowed_scopes=["eng"],
            namespace="mine",
            retrieval_mode=RetrievalMode.HYBRID,
        )
    )
    return [
        (i.document_id, i.retrieval_scores.fulltext, i.retrieval_scores.fused)
        for i in response.items
    ]


def test_hidden_documents_elsewhere_do_not_move_a_visible_items_scores(
    provider: ContextProvider, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "a.md").write_text("The zirconium ledger is reconciled every Friday.\n", "utf-8")
    (mine / "b.md").write_text("Ledger exports go to finance on Mondays.\n", "utf-8")
    provider.ingest_path(mine, namespace="mine", scopes=["eng"])
    before = scores_for(provider)

    hidden = tmp_path / "hidden"
    hidden.mkdir()
    for n in range(30):
        (hidden / f"h{n}.md").write_text(f"zirconium zirconium ledger note {n}\n", "utf-8")
    provider.ingest_path(hidden, namespace="other", scopes=["eng"])
    provider.ingest_path(hidden, namespace="mine", scopes=["hr"], source_uri_prefix="hr://")

    assert [doc for doc, _, _ in before][:1] == ["a.md"]
    assert scores_for(provider) == before
