from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphctx.store.sqlite.fts5_query import match_expression
from graphctx.text.lexical import MAX_QUERY_TERMS, analyze


def test_hangul_runs_become_overlapping_bigrams() -> None:
    assert analyze("부당해고를") == ["부당", "당해", "해고", "고를"]


def test_latin_words_are_lower_cased_and_kept_whole() -> None:
    assert analyze("Restart the Payment-Gateway!") == ["restart", "the", "payment", "gateway"]


def test_a_query_without_terms_has_no_match_expression() -> None:
    assert match_expression("?!  ...") is None


@given(st.text(max_size=300))
def test_match_expression_quotes_every_term(text: str) -> None:
    expression = match_expression(text)
    if expression is None:
        assert analyze(text) == []
        return
    terms = expression.split(" OR ")
    assert len(terms) <= MAX_QUERY_TERMS
    assert all(t.startswith('"') and t.endswith('"') for t in terms)
