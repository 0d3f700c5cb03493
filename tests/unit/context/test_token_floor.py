from __future__ import annotations

import sys

import pytest
from context_strategies import SEGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context.token_floor import (
    SPLIT_NOT_WHITE_SPACE,
    counted_words,
    pretoken_floor,
    split_not_white_space,
)
from graphctx.context.tokens import (
    ExactEncoding,
    FlooredTokenCounter,
    PureTiktokenCounter,
    TiktokenCounter,
    TokenCounter,
)

# Unicode White_Space (PropList.txt), what \s means in tiktoken's expressions.
WHITE_SPACE = frozenset(
    chr(c)
    for c in (
        *(0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680),
        *range(0x2000, 0x200B),
        *(0x2028, 0x2029, 0x202F, 0x205F, 0x3000),
    )
)
ENCODINGS: tuple[ExactEncoding, ...] = ("o200k_base", "cl100k_base")
COUNTERS: list[FlooredTokenCounter] = [
    *(TiktokenCounter(encoding).load() for encoding in ENCODINGS),
    *(PureTiktokenCounter(encoding).load() for encoding in ENCODINGS),
]

# Characters at the edges of the splitting expressions: every kind of whitespace, the
# characters str.split() cuts at but \s does not, "/" (o200k's [\r\n/]* tail), apostrophes of
# contractions, digits, marks, letters of every case and script the corpus has, punctuation.
EDGES = sorted(
    WHITE_SPACE
    | set(SPLIT_NOT_WHITE_SPACE)
    | set("/'sStTdDmMlLvVrReE0123456789\u0301\u0308\u200b\u00e9\u00c9\u01c5")
    | set('한국어中文ǅ.,;:!?-_()[]<>&|"#*=+@')
)
texts = st.one_of(
    st.text(st.sampled_from(EDGES), max_size=60),
    st.lists(st.sampled_from([*SEGMENTS, *EDGES, " / ", "\n/", "//", "a/b"]), max_size=12).map(
        "".join
    ),
    st.text(max_size=40),
)


def test_python_split_whitespace_is_white_space_and_four_separators() -> None:
    splits = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert splits == WHITE_SPACE | set(SPLIT_NOT_WHITE_SPACE)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_floor_never_exceeds_the_exact_count(text: str) -> None:
    for counter in COUNTERS:
        assert counter.floor(text) == pretoken_floor(text) <= counter.count(text), counter


@pytest.mark.parametrize(
    ("text", "floor"),
    [
        ("", 0),
        ("   \n\t", 0),
        ("two words", 2),
        ("a / b", 2),  # a word of "/" alone can join the piece before it ("-\n/")
        ("-\n/ //a/ b", 3),
        ("a\x1cb c", 2),  # U+001C is no whitespace to the tokenizer: "a\x1cb" is one word
        ("a\x1c\x1c", 0),  # str.split() gives one word: two taken off, none left
        ('<source id="S1">\nText.\n</source>\n', 4),
    ],
)
def test_floor_counts_the_words_with_a_character_other_than_a_slash(text: str, floor: int) -> None:
    assert pretoken_floor(text) == floor


@pytest.mark.parametrize("counter", COUNTERS, ids=repr)
def test_the_installed_encoders_split_as_the_floor_reads(counter: TokenCounter) -> None:
    assert isinstance(counter, FlooredTokenCounter)
    assert counter.floor("several words here") == 3


def test_an_encoder_splitting_otherwise_has_no_floor() -> None:
    counter = TiktokenCounter("o200k_base").load()
    counter._floored = counter._splits_as_read(_OtherEncoder())
    assert counter.floor("several words here") == 0


class _OtherEncoder:
    _pat_str = r"\S+|\s+"

    def encode_ordinary(self, text: str) -> list[int]:
        return []


def test_a_word_of_slashes_can_share_the_token_of_the_word_before() -> None:
    o200k = TiktokenCounter("o200k_base").load()
    text = ".\n/"
    assert len(text.split()) == 2 > o200k.count(text) == 1  # why such words are left out
    assert pretoken_floor(".\n/") == 1


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_counted_words_never_decrease_as_text_is_appended(text: str, more: str) -> None:
    joined = text + more
    counts = [counted_words(joined[:length]) for length in range(len(joined) + 1)]
    assert counts == sorted(counts)
    assert pretoken_floor(text) == max(0, counts[len(text)] - split_not_white_space(text))
