from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphctx.context.text_memo import text_memo_partitions
from graphctx.retrieve.relevance import STOP_TERMS, Relevance, assess_relevance
from graphctx.text.lexical import analyze, index_terms

TEXTS = st.text(alphabet=st.sampled_from("abcdeinrsty' -.부당해고를중"), max_size=50)


def reference_relevance(query: str, pool: list[str]) -> Relevance:
    """The floor computed from each chunk's whole analysed term set."""
    terms = [t for t in dict.fromkeys(analyze(query)) if t not in STOP_TERMS]
    if not terms or not pool:
        return Relevance(0.0, len(terms), 0)
    analysed = [frozenset(analyze(text)) for text in pool]
    frequency = {t: sum(t in chunk for chunk in analysed) for t in terms}
    weight = {t: math.log((len(pool) + 1) / (frequency[t] + 0.5)) for t in terms}
    total = sum(weight.values())
    best = max(sum(weight[t] for t in terms if t in chunk) for chunk in analysed) / total
    return Relevance(best, len(terms), sum(1 for t in terms if frequency[t]))


def test_a_query_sharing_hangul_bigrams_with_the_evidence_is_answerable() -> None:
    relevance = assess_relevance("부당해고 구제", ["근로자의 부당해고를 금지한다", "임금"])
    shared, missing = 3 * math.log(3 / 1.5), math.log(3 / 0.5)  # 부당 당해 해고; 구제
    assert (relevance.terms, relevance.covered) == (4, 3)
    assert relevance.coverage == pytest.approx(shared / (shared + missing))
    assert relevance.answerable


def test_a_query_none_of_whose_words_the_evidence_uses_is_not_answerable() -> None:
    relevance = assess_relevance("gateway timeouts", ["The payment service restarted."])
    assert relevance == Relevance(0.0, 2, 0)
    assert not relevance.answerable


def test_a_stemmed_query_word_matches_another_form_of_it() -> None:
    relevance = assess_relevance("restarting gateways", ["The payment service restarted."])
    assert (relevance.terms, relevance.covered) == (2, 1)


@given(TEXTS, st.lists(TEXTS, max_size=8))
def test_the_floor_is_what_each_chunks_whole_term_set_gives(query: str, pool: list[str]) -> None:
    assert assess_relevance(query, pool) == reference_relevance(query, pool)


@given(TEXTS, st.lists(TEXTS, max_size=8), st.integers(0, 8))
def test_memoised_and_fresh_chunk_terms_give_the_same_floor(
    query: str, pool: list[str], warm: int
) -> None:
    with text_memo_partitions({text: ("ns", frozenset({"eng"})) for text in pool}):
        assess_relevance(query, pool[:warm])  # some of the pool's terms memoised
        assert assess_relevance(query, pool) == reference_relevance(query, pool)


@given(TEXTS, st.lists(TEXTS, max_size=8), st.lists(st.booleans(), max_size=8), st.integers(0, 8))
def test_stored_memoised_and_fresh_chunk_terms_give_the_same_floor(
    query: str, pool: list[str], stored: list[bool], warm: int
) -> None:
    indexed = {text: index_terms(text) for text, keep in zip(pool, stored, strict=False) if keep}
    with text_memo_partitions({text: ("ns", frozenset({"eng"})) for text in pool}):
        assess_relevance(query, pool[:warm])
        assert assess_relevance(query, pool, indexed=indexed) == reference_relevance(query, pool)


def test_a_texts_stored_terms_stand_for_it_and_for_no_other_text() -> None:
    pool = ["The gateway restarted.", "gateway timeouts"]
    indexed = {pool[0]: "the payment servic restart"}  # what the store says of the first

    relevance = assess_relevance("gateway restarting", pool, indexed=indexed)

    weight = math.log(3 / 1.5)  # each of the two words is in one of the two chunks
    assert (relevance.terms, relevance.covered) == (2, 2)
    assert relevance.coverage == weight / (2 * weight)
