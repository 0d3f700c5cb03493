"""The test's own account of what a model reads as a tag, independent of graphctx's code.

It drops invisible characters (Cf, Mn, Me, Hangul fillers), applies NFKC, folds each
character to an ASCII look-alike (Unicode confusables via ``confusable-homoglyphs``, Latin
small capitals by name, a few brackets by hand) and lower-cases; then it looks for our
delimiters and for chat-template control tokens. An escaped ``&lt;`` is no bracket.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from confusable_homoglyphs import confusables

__all__ = ["forged_tags", "model_reading"]

_BRACKETS = {
    **dict.fromkeys("\u00ab\u27ea\u300a\u226a\u2039\u3008\u27e8\u2329\u276e\u02c2\u1438", "<"),
    **dict.fromkeys("\u00bb\u27eb\u300b\u226b\u203a\u3009\u27e9\u232a\u276f\u02c3\u1433", ">"),
}
_FORGED = re.compile(
    r"<\s*/?\s*(?:source|context|question)(?![a-z0-9_])"
    r"|<\s*/?\s*(?:s|sys|start_of_turn|end_of_turn)\s*>"
    r"|<\s*\|\s*[a-z_]+\s*\|?\s*>?"
    r"|\[\s*/?\s*inst\s*\]"
)


@functools.cache
def _fold(char: str) -> str:
    if char.isascii():
        return char.lower()
    folded = []
    for part in unicodedata.normalize("NFKC", char):
        if unicodedata.category(part) in {"Cf", "Mn", "Me"} or part in "\u115f\u1160\u3164":
            continue
        if part in _BRACKETS:
            folded.append(_BRACKETS[part])
            continue
        name = unicodedata.name(part, "")
        small_capital = re.fullmatch(r"LATIN LETTER SMALL CAPITAL ([A-Z])", name)
        if small_capital:
            folded.append(small_capital.group(1).lower())
            continue
        look_alikes = {
            g["c"].lower()
            for c in (part, part.lower())
            for g in confusables.confusables_data.get(c, ())
            if len(g["c"]) == 1 and g["c"].isascii()
        }
        folded.append(look_alikes.pop() if len(look_alikes) == 1 else part.lower())
    return "".join(folded)


def model_reading(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(_fold(char) for char in decomposed)


def forged_tags(text: str) -> list[str]:
    """Every delimiter or control token a model would read in ``text``."""
    return _FORGED.findall(model_reading(text))
