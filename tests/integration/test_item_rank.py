"""Every item carries its rank (its 1-based place in the bundle); the order is the rank, and the
contract says so: ``retrieval_scores.fused`` is the retrieval score, which need not decrease."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from graphctx.contract import ContextRequest, ContextResponse, EvidenceItem, RetrievalScores
from graphctx.provider import ContextProvider

# The stale ADR matches the query best (its fused score is the highest) yet comes last.
DOCUMENTS = {
    "adr3.md": "---\ndocument_id: adr-3\nscopes: [eng]\nupdated_at: 2024-03-01\n"
    "superseded_by: adr-7\n---\nWe use RabbitMQ as the message broker for shipment events.\n",
    "adr7.md": "---\ndocument_id: adr-7\nscopes: [eng]\nupdated_at: 2026-02-01\n---\n"
    "Kafka now carries shipment events between the warehouse services.\n",
    "ops.md": "---\ndocument_id: ops\nscopes: [eng]\n---\n"
    "The message broker cluster is patched on the first Monday of each month.\n",
}


@pytest.fixture
def bundle(tmp_path: Path, provider: ContextProvider) -> ContextResponse:
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in DOCUMENTS.items():
        (root / name).write_text(text, encoding="utf-8")
    assert provider.ingest_path(root, namespace="acme").errors == []
    request = ContextRequest(
        query="RabbitMQ message broker for shipment events",
        principal_id="p",
        allowed_scopes=["eng"],
        namespace="acme",
    )
    return provider.retrieve(request)


def test_every_item_carries_its_place_in_the_bundle_as_rank(bundle: ContextResponse) -> None:
    assert len(bundle.items) >= 2
    assert [item.rank for item in bundle.items] == list(range(1, len(bundle.items) + 1))
    assert all(item.citation_id == f"S{item.rank}" for item in bundle.items)
    assert all(
        '"rank":' in item.model_dump_json() for item in bundle.items
    )  # on the wire, for clients that re-sort


def test_fused_is_not_the_order_and_rank_is(bundle: ContextResponse) -> None:
    stale = next(item for item in bundle.items if item.document_id == "adr-3")
    ahead = [item for item in bundle.items if item.rank < stale.rank]
    assert ahead, "the stale item is ranked after current evidence"
    assert any(item.retrieval_scores.fused < stale.retrieval_scores.fused for item in ahead)
    # ... so a client re-sorting by fused would reorder the bundle: the rank is the order.
    assert sorted(bundle.items, key=lambda item: item.rank) == bundle.items


def test_the_contract_documents_rank_as_the_order_and_fused_as_the_retrieval_score() -> None:
    item = EvidenceItem.model_json_schema()["properties"]
    scores = RetrievalScores.model_json_schema()
    assert "position in the bundle" in item["rank"]["description"]
    fused = " ".join(scores["properties"]["fused"]["description"].split())
    assert "retrieval score" in fused
    assert "not the bundle's order" in fused
    assert "rank" in fused
    assert "rank" in " ".join(scores["description"].split())
    assert "orders the bundle" not in (RetrievalScores.__doc__ or "")


def test_an_item_whose_rank_is_not_its_citation_number_is_refused(
    bundle: ContextResponse,
) -> None:
    """With citation ids running S1..Sn, this makes the ranks run 1..n in bundle order."""
    data = bundle.items[0].model_dump()
    data["rank"] = 2
    with pytest.raises(ValidationError, match="citation_id must be S<rank>"):
        EvidenceItem.model_validate(data)
