"""Neutralising prefixes of a text read once gives exactly what neutralising each prefix gave.

The packer renders many prefixes of one chunk while it looks for the longest that fits; each
prefix used to be read from scratch. The reference below is the replaced function, verbatim:
for every prefix of texts dense in brackets, look-alikes, invisible characters and the words
that make a tag (cut anywhere, inside a tag word included), both must agree.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context.delimiters import (
    _AFTER_ANGLE,
    _AFTER_SQUARE,
    _PLAIN,
    ESCAPED_BRACKET,
    ESCAPED_SQUARE_BRACKET,
    PrefixNeutraliser,
    neutralise_delimiters,
)
from graphctx.context.reading import _VETTED, Reading, read, reads_as
from graphctx.context.token_floor import counted_words, split_not_white_space


def reference_read(text: str) -> Reading:
    """The reading built one character at a time (the replaced ``read``, verbatim)."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for part in reads_as(char):
            chars.append(part)
            origin.append(index)
    return Reading("".join(chars), origin)


def reference_neutralise(text: str) -> str:
    escaped = {index: ESCAPED_BRACKET for index, char in enumerate(text) if char == "<"}
    if not text.isascii() or "[" in text:
        escaped.update(reference_look_alikes(text))
    if not escaped:
        return text
    return "".join(escaped.get(index, char) for index, char in enumerate(text))


def reference_look_alikes(text: str) -> dict[int, str]:
    reading = reference_read(text)
    found: dict[int, str] = {}
    for position, char in enumerate(reading.text):
        source = reading.origin[position]
        if char == "<" and text[source] != "<" and _AFTER_ANGLE.match(reading.text, position + 1):
            found[source] = ESCAPED_BRACKET
        elif char == "[" and _AFTER_SQUARE.match(reading.text, position + 1):
            found[source] = ESCAPED_SQUARE_BRACKET
    return found


PIECES = [
    "<", "[", "]", ">", "/", "|", " ", "\n", "\u200b", "\u0301", "\u2039", "\uff1c", "\u00ab",
    "\u3010", "\uff3b", "\uff0f", "\u1d1b", "source", "sources", "context", "question", "inst",
    "INST", "im_start", "sys", "s", "\u0455ource", "해고", "café", "a < b", "ﬁ", "x",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


@settings(max_examples=500, deadline=None)
@given(texts)
def test_every_prefix_is_neutralised_as_if_read_alone(text: str) -> None:
    neutraliser = PrefixNeutraliser(text)
    for length in range(len(text) + 1):
        assert neutraliser.prefix(length) == reference_neutralise(text[:length])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | texts)
def test_whole_texts_are_neutralised_as_before(text: str) -> None:
    assert neutralise_delimiters(text) == reference_neutralise(text)


# Every character the vetted table maps, and text that has no bracket-like character at all:
# the neutraliser skips reading such text, and must still agree with reading it.
LOOK_ALIKES = sorted(_VETTED)
QUIET = ["해고", "café", "ﬁ", "\u200b", "\u0301", "\u3164", "x", " ", "source", "inst", "]", ">"]
mixed = st.lists(st.sampled_from(PIECES + LOOK_ALIKES + QUIET), max_size=24).map("".join)
quiet = st.lists(st.sampled_from(QUIET), max_size=24).map("".join)


@settings(max_examples=400, deadline=None)
@given(mixed | quiet)
def test_texts_with_or_without_look_alikes_are_neutralised_as_if_read_alone(text: str) -> None:
    neutraliser = PrefixNeutraliser(text)
    for length in range(len(text) + 1):
        assert neutraliser.prefix(length) == reference_neutralise(text[:length])


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60) | mixed)
def test_a_reading_is_the_readings_of_its_characters_in_order(text: str) -> None:
    fast, slow = read(text), reference_read(text)
    assert (fast.text, fast.origin) == (slow.text, slow.origin)


def test_the_characters_the_look_alike_check_skips_never_read_as_a_bracket() -> None:
    skipped = [chr(code) for code in range(0x110000) if _PLAIN.fullmatch(chr(code))]
    assert "[" not in skipped
    assert len(skipped) == 0x80 - 1 + (0xD7A3 - 0xAC00 + 1) + (0x9FFF - 0x4E00 + 1)
    for char in skipped:
        reading = reads_as(char)
        assert char == "<" or ("<" not in reading and "[" not in reading), hex(ord(char))


@settings(max_examples=400, deadline=None)
@given(mixed | quiet | st.text(max_size=40))
def test_a_neutralised_prefix_counts_the_words_the_prefix_counts(text: str) -> None:
    """What the packer's bound on every prefix's floor relies on (``context/blocks.py``)."""
    neutraliser = PrefixNeutraliser(text)
    for length in range(len(text) + 1):
        shown = neutraliser.prefix(length)
        assert counted_words(shown) == counted_words(text[:length])
        assert split_not_white_space(shown) == split_not_white_space(text[:length])


def test_no_character_str_split_cuts_at_reads_as_a_bracket() -> None:
    separators = [chr(code) for code in range(0x110000) if len(f"a{chr(code)}a".split()) == 2]
    assert "\n" in separators
    assert "\x1c" in separators
    for char in [*separators, "/"]:
        reading = reads_as(char)
        assert "<" not in reading, hex(ord(char))
        assert "[" not in reading, hex(ord(char))
