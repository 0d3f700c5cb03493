"""``window_around``: the cited chunk widened over contiguous visible text, within a budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context import default_token_counter
from graphctx.retrieve.source_window import window_around
from graphctx.store.records import ChunkView, DocumentDates

COUNTER = default_token_counter()


def view(index: int, start: int, text: str) -> ChunkView:
    return ChunkView(
        chunk_id=f"d@1#{index}",
        document_id="d",
        document_version="1",
        source_uri="mem://d",
        title=None,
        text=text,
        start_char=start,
        end_char=start + len(text),
        ordinal=index,
        scopes=frozenset({"a"}),
        dates=DocumentDates(),
        superseded=False,
        superseded_by=None,
    )


def split(parts: list[str]) -> list[ChunkView]:
    views, start = [], 0
    for index, part in enumerate(parts):
        views.append(view(index, start, part))
        start += len(part)
    return views


parts = st.lists(st.text(alphabet="abc de.\n", min_size=1, max_size=80), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(parts=parts, data=st.data(), budget=st.integers(1, 120))
def test_the_window_is_exact_visible_text_around_the_chunk_within_the_budget(
    parts: list[str], data: st.DataObject, budget: int
) -> None:
    chunks = split(parts)
    cited = data.draw(st.sampled_from(chunks))
    others = [c for c in chunks if c is not cited]
    hidden = data.draw(st.frozensets(st.sampled_from(others))) if others else frozenset()
    visible = [c for c in chunks if c.chunk_id not in {h.chunk_id for h in hidden}]
    document = "".join(parts)

    window = window_around(cited, visible, budget, COUNTER.count)

    assert document[window.start_char : window.end_char] == window.text
    assert window.used_tokens == COUNTER.count(window.text) <= budget
    for gone in hidden:  # never a character of a chunk that was not visible
        assert window.end_char <= gone.start_char or gone.end_char <= window.start_char
    if COUNTER.count(cited.text) <= budget:
        assert window.start_char <= cited.start_char <= cited.end_char <= window.end_char
    else:
        assert window.start_char == cited.start_char  # the chunk's start, cut at the budget
        assert window.end_char < cited.end_char


def test_a_chunk_that_fits_is_widened_on_both_sides() -> None:
    chunks = split(["alpha one. ", "bravo two. ", "charlie three. ", "delta four. "])
    window = window_around(chunks[1], chunks, 9, COUNTER.count)
    assert "bravo two." in window.text
    assert window.start_char < chunks[1].start_char
    assert window.end_char > chunks[1].end_char
    assert window.truncated_before or window.truncated_after
