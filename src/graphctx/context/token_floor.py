"""A provable lower bound on a text's token count for the OpenAI BPE encodings, without encoding.

o200k_base and cl100k_base encode a text in two steps: a regular expression splits it into
*pieces* (the matches tile the text: every character starts a match of some alternative,
being whitespace, a letter, a digit or anything else), then each piece is byte-pair encoded
on its own into at least one token. So the count is at least the number of pieces.

Whitespace here is ``\\s`` of that expression, Unicode ``White_Space``. Call a *word* a
maximal run of characters that are not whitespace. Inside a piece, whitespace can only be

- the optional first character of a letter piece (``[^\\r\\n\\p{L}\\p{N}]?`` then letters);
- the optional leading space of a punctuation piece (`` ?[^\\s\\p{L}\\p{N}]+``);
- in its trailing ``[\\r\\n/]*`` (o200k) or ``[\\r\\n]*`` (cl100k): only newlines, and ``/``;
- all of a piece made of whitespace only.

So a piece that holds characters of two words holds, of the later word, only ``/``
characters. Each word with a character other than ``/`` therefore has its first such
character in a piece of its own: ``count(text) >= `` the number of those words
(:func:`pretoken_floor`). The bound is checked against both encodings by property tests
(tests/unit/context/test_token_floor.py), and a counter offers it (``floor``) only when its
splitting expression is one of the two read here.

Python's ``str.split()`` splits on ``White_Space`` and on U+001C..U+001F as well (a test
checks every code point): each of those four can add at most one word, so they are taken
off again.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "FLOORED_PATTERNS",
    "SPLIT_NOT_WHITE_SPACE",
    "counted_words",
    "pretoken_floor",
    "split_not_white_space",
]

# tiktoken's splitting expressions (``Encoding._pat_str``) that the argument above reads.
O200K_PATTERN: Final = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
CL100K_PATTERN: Final = (
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
    r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
)
FLOORED_PATTERNS: Final = frozenset({O200K_PATTERN, CL100K_PATTERN})

# Characters Python's str.split() treats as whitespace although White_Space does not.
SPLIT_NOT_WHITE_SPACE: Final = "\x1c\x1d\x1e\x1f"


def pretoken_floor(text: str) -> int:
    """The number of words of ``text`` with a character other than ``/``: never more than
    its o200k_base or cl100k_base token count (module docstring)."""
    # str.split() may have cut a word at each of these: take as many words off
    return max(0, counted_words(text) - split_not_white_space(text))


def counted_words(text: str) -> int:
    """How many words of ``text.split()`` have a character other than ``/``.

    It never decreases as text is appended: a word only grows, and keeps the characters it
    had. Words of two texts joined by whitespace add up."""
    return len(text.split()) - _slash_words(text)


def split_not_white_space(text: str) -> int:
    """How many characters of ``text`` ``str.split()`` cuts at although they are not
    whitespace (:data:`SPLIT_NOT_WHITE_SPACE`)."""
    return sum(map(text.count, SPLIT_NOT_WHITE_SPACE))


def _slash_words(text: str) -> int:
    """How many words of ``text.split()`` are made of ``/`` alone."""
    found = 0
    at = text.find("/")
    while at >= 0:
        end = at
        while end < len(text) and text[end] == "/":
            end += 1
        if (at == 0 or text[at - 1].isspace()) and (end == len(text) or text[end].isspace()):
            found += 1
        at = text.find("/", end)
    return found
