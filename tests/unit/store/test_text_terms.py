"""A chunk's own terms are cut exactly from the terms the full-text index holds for it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphctx.store.records import NewChunk, fulltext_source, text_terms
from graphctx.testing.fixtures import make_document, unit_vector
from graphctx.text.lexical import index_terms

TEXTS = st.text(alphabet=st.sampled_from("abcdeinrsty'\u2019 -.부당해고를중"), max_size=40)
VECTOR = unit_vector("t")


@given(st.lists(TEXTS, max_size=3), st.none() | TEXTS, TEXTS)
def test_a_chunks_text_terms_are_the_analysed_terms_of_its_text_alone(
    heading: list[str], title: str | None, text: str
) -> None:
    document = make_document("ns", "d", text, {"eng"}, title=title)
    chunk = NewChunk(0, 0, len(text), text, VECTOR, tuple(heading))
    indexed = index_terms(fulltext_source(document, chunk))

    assert text_terms(indexed, chunk.heading_path, document.title) == index_terms(text)


def test_the_title_and_headings_words_are_not_the_texts() -> None:
    document = make_document("ns", "d", "gateway restarted", {"eng"}, title="Kafka lag")
    chunk = NewChunk(0, 0, 17, "gateway restarted", VECTOR, ("Runbook", "부당해고"))
    indexed = index_terms(fulltext_source(document, chunk))

    assert indexed.split()[:5] == ["runbook", "부당", "당해", "해고", "kafka"]
    assert text_terms(indexed, chunk.heading_path, document.title) == "gateway restart"
