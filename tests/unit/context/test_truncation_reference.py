"""The abbreviation check behind safe cut points decides as the replaced code did, which found
the word before each dot with ``re.search(r"([A-Za-z][A-Za-z.]*)$", line[:dot])`` (a scan of
the whole line per dot)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context import truncation


def reference_is_abbreviation(line: str, dot: int) -> bool:
    if truncation._LIST_NUMBER.match(line[: dot + 1]):
        return True
    word = re.search(r"([A-Za-z][A-Za-z.]*)$", line[:dot])
    if word is None:
        return False
    token = word.group(1)
    return len(token) == 1 or token.lower() in truncation._ABBREVIATIONS


PIECES = [
    ".", ". ", "..", "e.g", "i.e.", "Dr", "dr", "J", "etc", "1", "12", "123", "1234", " ", "\n",
    "\n\n", "word", "Art", "fig", "x", "다", "요", "! ", "?", "。", "…", ")", "\"", "- ", "# ",
    "| a |", "```", "~~~", "> ", "\t", "café", "a.b", "...", "해고.",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(texts)
def test_the_word_before_each_dot_is_found_as_before(text: str) -> None:
    for line in text.split("\n"):
        for dot in (i for i, char in enumerate(line) if char == "."):
            assert truncation._is_abbreviation(line, dot) == reference_is_abbreviation(line, dot)
