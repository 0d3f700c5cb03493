"""The explorer's surrounding text: only visible chunks, only the item's version, exact spans."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from graphctx.contract import EvidenceItem, Freshness, NodeKind, ProvenanceStep, RetrievalScores
from graphctx.contract.response import Span
from graphctx.retrieve.surrounding import build_surrounding
from graphctx.store.records import ChunkView, DocumentDates

TEXT = (
    "Intro paragraph about deploys. "
    "Roll back by pausing the pipeline. "
    "Then run the rollback job. "
    "Secret appendix: the manual code is Z-1."
)
PUBLIC = frozenset({"public"})


def chunk(
    start: int,
    end: int,
    ordinal: int,
    *,
    scopes: frozenset[str] = PUBLIC,
    version: str = "1",
    text: str = TEXT,
) -> ChunkView:
    return ChunkView(
        chunk_id=f"doc@{version}#{ordinal}",
        document_id="doc",
        document_version=version,
        source_uri="file:///doc.md",
        title="Doc",
        text=text[start:end],
        start_char=start,
        end_char=end,
        ordinal=ordinal,
        scopes=scopes,
        dates=DocumentDates(),
        superseded=False,
        superseded_by=None,
    )


def item_at(start: int, end: int, *, version: str = "1", text: str = TEXT) -> EvidenceItem:
    return EvidenceItem(
        citation_id="S1",
        rank=1,
        content=text[start:end],
        source_uri="file:///doc.md",
        document_id="doc",
        chunk_id=f"doc@{version}#1",
        document_version=version,
        freshness=Freshness.CURRENT,
        provenance_path=[ProvenanceStep(kind=NodeKind.DOCUMENT, id="doc")],
        retrieval_scores=RetrievalScores(fused=0.5),
        span=Span(start_char=start, end_char=end),
        tokens=10,
    )


SECOND = TEXT.index("Roll back")
THIRD = TEXT.index("Then run")
FOURTH = TEXT.index("Secret appendix")
CHUNKS = [
    chunk(0, SECOND, 0),
    chunk(SECOND, THIRD, 1),
    chunk(THIRD, FOURTH, 2),
    chunk(FOURTH, len(TEXT), 3, scopes=frozenset({"secret"})),
]


def test_the_span_is_highlighted_between_the_visible_neighbouring_chunks() -> None:
    around = build_surrounding(item_at(SECOND, THIRD), CHUNKS, PUBLIC)
    assert around is not None
    assert around.before == TEXT[:SECOND]
    assert around.highlighted == TEXT[SECOND:THIRD]
    assert around.after == TEXT[THIRD:FOURTH]
    assert not around.truncated_before
    assert not around.truncated_after  # the secret chunk that follows leaves no trace


def test_a_chunk_outside_the_effective_scopes_never_contributes_text() -> None:
    around = build_surrounding(item_at(THIRD, FOURTH), CHUNKS, PUBLIC)
    assert around is not None
    assert "Secret" not in around.before + around.highlighted + around.after
    assert "Z-1" not in around.after
    assert around.after == ""


def test_a_principal_holding_the_scope_sees_the_following_chunk() -> None:
    around = build_surrounding(item_at(THIRD, FOURTH), CHUNKS, frozenset({"public", "secret"}))
    assert around is not None
    assert around.after == TEXT[FOURTH:]
    assert not around.truncated_after


def test_chunks_of_another_version_are_never_mixed_in() -> None:
    newer = [chunk(s.start_char, s.end_char, s.ordinal, version="2") for s in CHUNKS[:3]]
    assert build_surrounding(item_at(SECOND, THIRD), newer, PUBLIC) is None


def test_context_is_omitted_when_the_chunks_do_not_reproduce_the_item() -> None:
    changed = TEXT.replace("pausing", "stopping")
    chunks = [chunk(0, len(changed), 0, text=changed)]
    assert build_surrounding(item_at(SECOND, THIRD), chunks, PUBLIC) is None


def test_overlapping_chunks_merge_into_one_contiguous_text() -> None:
    overlapping = [chunk(0, THIRD, 0), chunk(SECOND, FOURTH, 1), chunk(THIRD - 5, FOURTH, 2)]
    around = build_surrounding(item_at(THIRD, FOURTH), overlapping, PUBLIC)
    assert around is not None
    assert around.before + around.highlighted + around.after == TEXT[:FOURTH]


def test_the_context_window_is_bounded_on_both_sides() -> None:
    around = build_surrounding(item_at(SECOND, THIRD), CHUNKS[:3], PUBLIC, context_chars=5)
    assert around is not None
    assert around.before == TEXT[SECOND - 5 : SECOND]
    assert around.after == TEXT[THIRD : THIRD + 5]
    assert around.truncated_before
    assert around.truncated_after


@given(
    cuts=st.lists(st.integers(1, len(TEXT) - 1), unique=True, max_size=8).map(sorted),
    data=st.data(),
)
def test_any_chunking_rebuilds_exactly_the_document_text_around_any_span(
    cuts: list[int], data: st.DataObject
) -> None:
    bounds = [0, *cuts, len(TEXT)]
    chunks = [chunk(a, b, n) for n, (a, b) in enumerate(pairwise(bounds))]
    pick = data.draw(st.integers(0, len(chunks) - 1))
    start = data.draw(st.integers(chunks[pick].start_char, chunks[pick].end_char - 1))
    end = data.draw(st.integers(start + 1, chunks[pick].end_char))
    around = build_surrounding(item_at(start, end), chunks, PUBLIC, context_chars=len(TEXT))
    assert around is not None
    assert around.before + around.highlighted + around.after == TEXT
