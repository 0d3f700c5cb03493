"""How a model reads text: the skeleton that delimiter detection works on.

A model reads through spelling, so U+2039, a zero-width space, ``/`` and ``source`` in small
capitals read as ``</source>``. The reading of a text is built one character at a time, and
each character of the reading remembers which character of the text it came from:

- compatibility decomposition (NFKD: full-width and mathematical letters, ligatures);
- dropped: format characters (Cf: zero-width space and joiners, word joiner, bidi controls,
  soft hyphen, tags), combining and enclosing marks (Mn, Me: accents, the combining grapheme
  joiner, variation selectors) and the Hangul fillers, which are letters that draw nothing;
- confusables: each remaining character becomes the ASCII character it is confusable with,
  from the Unicode confusables data (UTS #39) as shipped by ``confusable-homoglyphs``, where
  that data names exactly one; then from the character's Unicode name for the Latin small
  capitals (``LATIN LETTER SMALL CAPITAL R``), which UTS #39 maps to Cherokee letters or not
  at all; then from a short vetted table of brackets and letters the data leaves out;
- lower case.

The confusables data is symmetric (it lists look-alikes, not UTS #39's one prototype per
character), so this is a skeleton towards ASCII, not the UTS #39 skeleton itself: it is only
ever compared with ASCII words.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from itertools import chain, repeat
from typing import Final, cast

__all__ = ["Reading", "read", "reads_as"]

_DROPPED_CATEGORIES: Final = frozenset({"Cf", "Mn", "Me"})
_BLANK_LETTERS: Final = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers (category Lo)
_SMALL_CAPITAL: Final = re.compile(r"LATIN (?:LETTER )?SMALL CAPITAL ([A-Z])")
# Look-alikes the confusables data leaves out (or maps to a non-ASCII prototype).
_VETTED: Final = {
    **dict.fromkeys("\u00ab\u27ea\u300a\u226a\u22d8\u2af7\u3008\u27e8\u2329\u276c\u276e", "<"),
    **dict.fromkeys("\u2991\u29fc\u2989\u22b2\u02c2\u1438\u2039\uff1c\ufe64", "<"),
    **dict.fromkeys("\u00bb\u27eb\u300b\u226b\u22d9\u2af8\u3009\u27e9\u232a\u276d\u276f", ">"),
    **dict.fromkeys("\u2992\u29fd\u298a\u22b3\u02c3\u1433\u203a\uff1e\ufe65", ">"),
    **dict.fromkeys("\u27e6\u3010\u3014\u3016\u301a\u2045\uff3b", "["),
    **dict.fromkeys("\u27e7\u3011\u3015\u3017\u301b\u2046\uff3d", "]"),
    **dict.fromkeys("\uff5c\u2223\u01c0\u05c0\u2758\u23d0", "|"),
    **dict.fromkeys("\uff0f\u2215\u2044\u29f8\u2571\u27cb", "/"),
    "\u0442": "t",  # Cyrillic te, drawn as a small capital T
    "\u0433": "r",  # Cyrillic ghe, drawn like r in many fonts
    "\u0578": "n",  # Armenian vo
    "\u057c": "n",  # Armenian ra
    "\u0581": "g",  # Armenian co
}


class Reading:
    """The reading of a text: ``text[i]`` was read from ``origin[i]`` of the original."""

    __slots__ = ("origin", "text")

    def __init__(self, text: str, origin: list[int]) -> None:
        self.text = text
        self.origin = origin


def read(text: str) -> Reading:
    """The text as a model reads it (see the module docstring), with its origin map."""
    if text.isascii():  # every character reads as itself in lower case
        return Reading(text.lower(), list(range(len(text))))
    parts = list(map(reads_as, text))
    lengths = list(map(len, parts))
    if lengths.count(1) == len(lengths):
        origin = list(range(len(text)))
    else:
        origin = list(chain.from_iterable(map(repeat, range(len(text)), lengths)))
    return Reading("".join(parts), origin)


@functools.cache
def reads_as(char: str) -> str:
    """The reading of one character (the same wherever it stands)."""
    if char.isascii():
        return char.lower()
    parts = []
    for part in unicodedata.normalize("NFKD", char):
        if part in _BLANK_LETTERS or unicodedata.category(part) in _DROPPED_CATEGORIES:
            continue
        parts.append(_ascii_look_alike(part.lower()) or _ascii_look_alike(part) or part)
    return "".join(parts).lower()


def _ascii_look_alike(char: str) -> str | None:
    if char.isascii():
        return char
    if char in _VETTED:
        return _VETTED[char]
    small_capital = _SMALL_CAPITAL.fullmatch(unicodedata.name(char, ""))
    if small_capital:
        return small_capital.group(1).lower()
    found = {
        glyph["c"].lower()
        for glyph in _confusables().get(char, ())
        if len(glyph["c"]) == 1 and glyph["c"].isascii()
    }
    return found.pop() if len(found) == 1 else None


@functools.cache
def _confusables() -> dict[str, list[dict[str, str]]]:
    """The confusables table (about 1 MB of JSON), loaded on first use, not at import."""
    from confusable_homoglyphs import confusables

    return cast(dict[str, list[dict[str, str]]], confusables.confusables_data)
