"""Which stored terms FTS5 gives back unchanged, and what a chunk's terms count.

The index column holds our own analysis (:func:`~graphctx.text.lexical.index_terms`), but
FTS5 tokenizes it again with ``unicode61 remove_diacritics 2``: a stored term like ``don't``
becomes the tokens ``don`` and ``t``, ``josé`` becomes ``jose``, so a chunk can match a query
term's phrase without holding the term (its count is 0). A stored term is REGULAR when FTS5
provably tokenizes it to exactly itself: it is made only of ASCII lower-case letters and
digits, Hangul syllables (U+AC00-U+D7A3) and CJK ideographs (U+4E00-U+9FFF), each of which
the tokenizer keeps as a token character and folds to itself (tests/unit/store/
test_term_shapes.py feeds every one of them to an FTS5 table and reads the vocabulary back).
Every other term is IRREGULAR. Each chunk's irregular terms are indexed a second time, alone
(:mod:`.fulltext`), so that a chunk matching a regular query term without matching it among
its irregular terms is known to hold the term without reading the chunk. Its regular terms
that occur more than once (:func:`repeated_terms`) are indexed a third time, so that such a
chunk not matching the term among them is known to hold it exactly once.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

__all__ = ["REGULAR_CHARACTERS", "irregular_terms", "is_regular", "repeated_terms", "term_count"]

REGULAR_CHARACTERS: Final = "a-z0-9\uac00-\ud7a3\u4e00-\u9fff"
_REGULAR: Final = re.compile(f"[{REGULAR_CHARACTERS}]+")
# A whole space-separated term (starting after a space or at the start) with any character
# outside the regular ones.
_IRREGULAR_TERM: Final = re.compile(f"(?<![^ ])[^ ]*[^ {REGULAR_CHARACTERS}][^ ]*")


def is_regular(term: str) -> bool:
    """Whether FTS5 tokenizes ``term`` to exactly one token, ``term`` itself."""
    return _REGULAR.fullmatch(term) is not None


def irregular_terms(stored: str) -> str:
    """The distinct irregular terms of ``stored`` (terms joined by single spaces), in order
    of first occurrence, joined by spaces; empty when every term is regular."""
    return " ".join(dict.fromkeys(_IRREGULAR_TERM.findall(stored)))


def repeated_terms(stored: str) -> str:
    """The distinct regular terms of ``stored`` that occur in it more than once, in order of
    first occurrence, joined by spaces; empty when there are none."""
    counts = Counter(stored.split(" "))
    return " ".join(term for term, n in counts.items() if n > 1 and is_regular(term))


def term_count(stored: str) -> int:
    """The length BM25 gives a chunk whose stored terms are ``stored``: its spaces plus one."""
    return stored.count(" ") + 1
