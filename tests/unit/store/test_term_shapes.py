"""Regular stored terms are exactly what FTS5 gives back; the rest are told apart.

:mod:`graphctx.store.sqlite.visible_bm25` counts a chunk as holding a regular query term
without reading it when the chunk matched the term only through its regular stored terms.
That is sound only if FTS5, with the store's tokenizer, turns every regular term into one
token equal to the term. The tokenizer classifies and folds one character at a time, so it
suffices that every regular character, alone, is a token character folded to itself: the
first test feeds all of them to an FTS5 table and reads the vocabulary back unchanged.
"""

from __future__ import annotations

import re
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.store.sqlite.fulltext import FTS_TOKENIZER
from graphctx.store.sqlite.term_shapes import (
    REGULAR_CHARACTERS,
    irregular_terms,
    is_regular,
    repeated_terms,
    term_count,
)
from graphctx.text.lexical import index_terms

RANGES = re.findall(r"(.)-(.)", REGULAR_CHARACTERS)
EVERY_REGULAR = [chr(c) for low, high in RANGES for c in range(ord(low), ord(high) + 1)]


def _tokens(texts: list[str]) -> tuple[set[str], int]:
    """FTS5's vocabulary of ``texts`` (one row each) and its count of token instances."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (terms, tokenize = '{FTS_TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'row')")
    conn.executemany("INSERT INTO t (terms) VALUES (?)", [(text,) for text in texts])
    vocabulary = {str(term) for (term,) in conn.execute("SELECT term FROM v")}
    (instances,) = conn.execute("SELECT coalesce(sum(cnt), 0) FROM v").fetchone()
    conn.close()
    return vocabulary, int(instances)


def test_the_regular_ranges_are_the_three_documented_ones() -> None:
    assert RANGES == [("a", "z"), ("0", "9"), ("\uac00", "\ud7a3"), ("\u4e00", "\u9fff")]
    assert len(EVERY_REGULAR) == 26 + 10 + 11172 + 20992


def test_fts5_tokenizes_every_regular_character_to_itself() -> None:
    vocabulary, instances = _tokens([" ".join(EVERY_REGULAR)])
    assert vocabulary == set(EVERY_REGULAR)
    assert instances == len(EVERY_REGULAR)  # no character gave two tokens


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from(EVERY_REGULAR), min_size=1, max_size=6), min_size=1))
def test_a_regular_term_is_one_token_equal_to_itself(terms: list[str]) -> None:
    assert all(is_regular(term) for term in terms)
    vocabulary, instances = _tokens([" ".join(terms)])
    assert vocabulary == set(terms)
    assert instances == len(terms)


def test_terms_fts5_changes_are_irregular() -> None:
    for term in ("don't", "n't", "josé", "née", "Über", "Ab", "a_b"):
        assert not is_regular(term)
        assert _tokens([term]) != ({term}, 1)
    # Kept as they are by FTS5, but outside the proven ranges: irregular, to be safe.
    for term in ("①", "straße", "\uff46\uff55\uff4c\uff4c", ""):
        assert not is_regular(term)


def test_irregular_terms_are_the_distinct_irregular_ones_in_order() -> None:
    stored = "don't ledger josé 해고 don't ① x1 née 中文 josé"
    assert irregular_terms(stored) == "don't josé ① née"
    assert irregular_terms("ledger 해고 中文 a1") == ""
    assert irregular_terms("") == ""


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(st.sampled_from("abz09가힣中鿿'éŉ①ßÀ_-"), min_size=1, max_size=5), max_size=8)
)
def test_irregular_terms_match_the_per_term_test(terms: list[str]) -> None:
    stored = " ".join(terms)
    expected = list(dict.fromkeys(t for t in stored.split(" ") if t and not is_regular(t)))
    assert irregular_terms(stored) == " ".join(expected)


def test_repeated_terms_are_the_distinct_regular_ones_held_twice_in_order() -> None:
    stored = "ledger don't 해고 ledger don't x1 해고 ledger née née zinc"
    assert repeated_terms(stored) == "ledger 해고"
    assert repeated_terms("ledger zinc don't") == ""
    assert repeated_terms("") == ""


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["ledger", "zinc", "x1", "해고", "don't", "josé", "t"]), max_size=12)
)
def test_a_regular_term_not_repeated_is_held_at_most_once(terms: list[str]) -> None:
    stored = " ".join(terms)
    repeated = set(repeated_terms(stored).split(" ")) - {""}
    for term in set(terms):
        held = terms.count(term)
        assert (term in repeated) == (is_regular(term) and held > 1)
        if is_regular(term) and term not in repeated:
            assert held <= 1


def test_term_count_is_the_length_bm25_used() -> None:
    for text in ("", "ledger", "The zirconium ledger, don't café ①", "부당해고를 당했다"):
        stored = index_terms(text)
        padded = f" {stored} "
        assert term_count(stored) == padded.count(" ") - 1
