"""Defusing text that would read, to a model, as one of the prompt's own delimiters.

Rendering wraps documents in ``<source id="Sn">`` blocks inside ``<context>``, after a
``<question>``. A document must not close or open one of those. A model reads through
spelling, so the check works on a *skeleton* of the characters after each opening bracket:

- opening brackets: ``<`` and its look-alikes (full-width, small form, single angle
  quotation mark, CJK and mathematical angle brackets, modifier and Canadian syllabics);
- format characters (zero-width space and joiners, bidi controls, soft hyphen) and combining
  marks are dropped, anywhere in the skeleton: they are invisible or leave the base letter
  readable (``s\u0301ource``, ``śource``);
- slashes: ``/`` and its look-alikes (full-width, division, fraction, big solidus);
- letters: NFKD folding (full-width and mathematical letters) plus the Cyrillic and Greek
  letters that look like the Latin letters of ``source``, ``context`` and ``question``.

A bracket whose skeleton spells ``[/]source``, ``[/]context`` or ``[/]question`` as a whole
word becomes ``&lt;``. Everything else is untouched, so code like ``a < b`` stays as written.
Delimiters are still not a security boundary: tool use and policy are enforced in code.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["ESCAPED_BRACKET", "neutralise_delimiters"]

ESCAPED_BRACKET: Final = "&lt;"
_OPENING: Final = frozenset("<\uff1c\ufe64\u2039\u3008\u27e8\u276e\u02c2\u1438\u2329")
_SLASHES: Final = frozenset("/\uff0f\u2215\u2044\u29f8\u2571")
_LOOK_ALIKES: Final = str.maketrans(
    {
        "\u0455": "s", "\u0405": "s", "\u043e": "o", "\u041e": "o", "\u03bf": "o",
        "\u039f": "o", "\u0441": "c", "\u0421": "c", "\u03f2": "c", "\u0435": "e",
        "\u0415": "e", "\u0395": "e", "\u0445": "x", "\u0425": "x", "\u03a7": "x",
        "\u0456": "i", "\u0406": "i", "\u0399": "i", "\u03b9": "i", "\u0442": "t",
        "\u0422": "t", "\u03a4": "t", "\u051b": "q", "\u03c5": "u", "\u057d": "u",
        "\u039d": "n", "\u0440": "r", "\u0433": "r",
    }
)  # fmt: skip
_INVISIBLE: Final = frozenset({"Cf", "Mn", "Me"})
_SKELETON_CHARS: Final = 48  # far more than "< / question" with spacing and invisibles
_SPELLS_DELIMITER: Final = re.compile(r"\s*/?\s*(?:source|context|question)(?![a-z0-9_])")


def neutralise_delimiters(text: str) -> str:
    """``text`` with every bracket that would open or close one of our delimiters escaped."""
    if not any(char in _OPENING for char in text):
        return text
    parts: list[str] = []
    for index, char in enumerate(text):
        if char in _OPENING and _SPELLS_DELIMITER.match(_skeleton(text, index + 1)):
            parts.append(ESCAPED_BRACKET)
        else:
            parts.append(char)
    return "".join(parts)


def _skeleton(text: str, start: int) -> str:
    """The characters after ``start`` as a model would read them: invisibles dropped,
    slashes and look-alike letters folded to ASCII, lower-cased."""
    folded: list[str] = []
    for char in text[start : start + _SKELETON_CHARS]:
        if char in _SLASHES:
            folded.append("/")
            continue
        for part in unicodedata.normalize("NFKD", char):
            if unicodedata.category(part) not in _INVISIBLE:
                folded.append(part.translate(_LOOK_ALIKES))
    return "".join(folded).lower()
