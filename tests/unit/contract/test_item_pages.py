"""An item's optional ``pages``: present for a paged source, absent (not null) otherwise."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from graphctx.contract import (
    ContextResponse,
    EvidenceItem,
    Freshness,
    NodeKind,
    PageRange,
    ProvenanceStep,
    RetrievalScores,
    Span,
)


def item(pages: PageRange | None = None) -> EvidenceItem:
    return EvidenceItem(
        citation_id="S1",
        rank=1,
        content="text",
        source_uri="file:///a.pdf",
        document_id="a.pdf",
        chunk_id="c1",
        document_version="v1",
        freshness=Freshness.CURRENT,
        provenance_path=[ProvenanceStep(kind=NodeKind.CHUNK, id="c1")],
        retrieval_scores=RetrievalScores(fused=0.5),
        span=Span(start_char=0, end_char=4),
        tokens=1,
        pages=pages,
    )


def test_an_unpaged_item_serializes_without_a_pages_key() -> None:
    dumped = json.loads(item().model_dump_json())

    assert "pages" not in dumped
    assert "pages" not in item().model_dump(mode="json")
    assert EvidenceItem.model_validate_json(item().model_dump_json()) == item()


def test_a_paged_item_serializes_its_pages_and_reads_back() -> None:
    paged = item(PageRange(first=2, last=3))

    assert json.loads(paged.model_dump_json())["pages"] == {"first": 2, "last": 3}
    assert EvidenceItem.model_validate_json(paged.model_dump_json()) == paged


@pytest.mark.parametrize(("first", "last"), [(0, 1), (3, 2)])
def test_a_page_range_is_one_based_and_ordered(first: int, last: int) -> None:
    with pytest.raises(ValidationError):
        PageRange(first=first, last=last)


def test_the_serialization_schema_still_describes_every_item_field() -> None:
    schema = ContextResponse.model_json_schema(mode="serialization")["$defs"]["EvidenceItem"]

    assert "pages" not in schema["required"]
    assert schema["properties"]["pages"]["description"]
    assert {"span", "content", "citation_id"} <= set(schema["required"])
