from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer

import graphctx.demo
from graphctx.store.sqlite.fts5_query import match_expression
from graphctx.text.lexical import (
    _IS_CJK,
    _TOKEN,
    MAX_QUERY_TERMS,
    analyze,
    index_terms,
    index_terms_many,
    term_sets_many,
)


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


# --- the C stemmer gives the pure-Python Snowball's stems ------------------------------------

_REFERENCE = EnglishStemmer()  # snowballstemmer's own Python code, not its PyStemmer shortcut


def reference_analyze(text: str) -> list[str]:
    """``analyze`` as it was with the pure-Python Snowball English stemmer."""
    terms: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if _IS_CJK.match(token):
            terms.extend(
                [token] if len(token) == 1 else [token[i : i + 2] for i in range(len(token) - 1)]
            )
        else:
            terms.append(_REFERENCE.stemWord(token.lower().replace("\u2019", "'")))
    return terms


WORDLIKE = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzéüñ'\u2019 ABCEIOUY-부당해고"), max_size=80
)


@given(WORDLIKE)
def test_the_analyser_stems_as_the_pure_python_snowball_does(text: str) -> None:
    assert analyze(text) == reference_analyze(text)


@given(st.lists(WORDLIKE, max_size=8))
def test_texts_analysed_together_get_the_terms_each_gets_alone(texts: list[str]) -> None:
    alone = [" ".join(reference_analyze(text)) for text in texts]
    assert index_terms_many(texts) == alone
    assert [index_terms(text) for text in texts] == alone


def test_a_batch_analyses_lone_syllables_runs_and_words_as_single_texts_do() -> None:
    texts = ["부", "부당해고를 Restarting it\u2019s", "", "restarting 부"]
    assert index_terms_many(texts) == ["부", "부당 당해 해고 고를 restart it", "", "restart 부"]


def test_every_word_of_the_bundled_corpus_stems_as_the_pure_python_snowball_does() -> None:
    corpus = Path(graphctx.demo.__file__).parent / "corpus"
    texts = [path.read_text("utf-8") for path in sorted(corpus.rglob("*")) if path.is_file()]
    suffixes = ("ational", "fulness", "iveness", "ization", "ously", "ingly", "edly", "ies", "'s")
    words = [
        f"{stem}{suffix}" for stem in ("rel", "hope", "act", "real", "gener") for suffix in suffixes
    ]
    text = " ".join([*texts, *words])
    assert len(set(analyze(text))) > 500
    assert analyze(text) == reference_analyze(text)


# --- term sets: membership without the bigrams ---------------------------------------------

MIXED = st.text(alphabet=st.sampled_from("abcdeinsy'\u2019 -_.9ΣİA부당해고中ア"), max_size=60)


def test_a_term_set_finds_bigrams_and_lone_syllables_without_making_up_longer_runs() -> None:
    (terms,) = term_sets_many(["부당해고를 중 Restarting it\u2019s"])
    assert all(t in terms for t in ["부당", "당해", "해고", "고를", "중", "restart", "it"])
    assert not any(t in terms for t in ["부당해", "부", "를중", "고를 ", "Restarting", "s"])


@given(st.lists(MIXED, max_size=6), st.lists(MIXED, max_size=6))
def test_a_term_set_holds_exactly_the_terms_the_analyser_gives(
    texts: list[str], others: list[str]
) -> None:
    """Asked about every term of any text here and every short piece of its own text (three
    CJK characters, a pair across a space, a lone character inside a run, ...), a term set
    says yes exactly for the terms ``analyze`` gives; analysed alone or together, the same."""
    sets = term_sets_many(texts)
    assert sets == [term_sets_many([text])[0] for text in texts]
    asked = {term for text in [*texts, *others] for term in analyze(text)}
    for text, terms in zip(texts, sets, strict=True):
        pieces = {text[i : i + n] for n in (1, 2, 3) for i in range(len(text))}
        analysed = set(analyze(text))
        assert {t for t in asked | pieces if t in terms} == (asked | pieces) & analysed
