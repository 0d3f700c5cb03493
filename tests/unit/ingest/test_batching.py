"""Ingest batches depend on the input alone: order kept, no repeated id, bounded size."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from graphctx.ingest.batching import (
    BATCH_CHARS,
    BATCH_DOCUMENTS,
    EMBED_CHARS,
    BatchCutter,
    PendingDocument,
    embed_slices,
)
from graphctx.ingest.pipeline import IngestDefaults, build_document
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument

_documents = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.integers(1, BATCH_CHARS // 2)), max_size=300
)


def _pending(index: int, document_id: str, length: int) -> PendingDocument:
    meta = DocumentMetadata(document_id=document_id, scopes=("eng",))
    source = SourceDocument(f"test://{index}", MediaType.TEXT, "x" * length, meta)
    return PendingDocument(index, source, build_document(source, Path("/"), IngestDefaults()))


def _cut(documents: list[tuple[str, int]]) -> list[list[PendingDocument]]:
    cutter = BatchCutter()
    batches = []
    for index, (document_id, length) in enumerate(documents):
        batches += cutter.add(_pending(index, document_id, length))
    last = cutter.flush()
    return [b for b in [*batches, last] if b]


@given(_documents)
def test_batches_keep_the_input_order_hold_no_repeated_id_and_stay_bounded(
    documents: list[tuple[str, int]],
) -> None:
    batches = _cut(documents)
    assert [p.index for batch in batches for p in batch] == list(range(len(documents)))
    for batch in batches:
        ids = [p.document.document_id for p in batch]
        assert len(ids) == len(set(ids))
        assert len(batch) <= BATCH_DOCUMENTS
        assert sum(len(p.document.text) for p in batch[:-1]) < BATCH_CHARS
    for batch, after in itertools.pairwise(batches):
        full = sum(len(p.document.text) for p in batch) >= BATCH_CHARS
        repeated = after[0].document.document_id in {p.document.document_id for p in batch}
        assert full or repeated or len(batch) == BATCH_DOCUMENTS
    assert _cut(documents) == batches


@given(_documents)
def test_a_batch_is_embedded_in_order_in_tasks_of_about_embed_chars(
    documents: list[tuple[str, int]],
) -> None:
    for batch in _cut(documents):
        slices = embed_slices(batch)
        assert [s for task in slices for s in task] == [p.source for p in batch]
        for task in slices:
            assert sum(len(s.text) for s in task[:-1]) < EMBED_CHARS
        for task in slices[:-1]:
            assert sum(len(s.text) for s in task) >= EMBED_CHARS
    assert embed_slices([]) == []
