"""Entity name keys: how a name, an alias or a query word is compared.

A *name key* is NFKC-normalised, case-folded text split into name words (letters, digits and
``- . / ' + # &`` inside a word) joined by one space, so "Payment-Service" and
"payment-service" compare equal and "물류서버-A에" keeps its hyphenated word. Stores index
names and aliases by these keys, ingest matches mentions with them and retrieval looks
entities up with them, so all three must build them here. A name word's *variants* drop a
trailing Korean particle (물류서버-a에 -> 물류서버-a) or an English possessive.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["NAME_WORD", "name_key", "word_variants"]

_NAME_CHARACTERS: Final = r"\w\-./'+#&"
NAME_WORD: Final = re.compile(rf"[{_NAME_CHARACTERS}]+")  # one word of a name, as in text
_NAME_SEPARATORS: Final = re.compile(rf"[^{_NAME_CHARACTERS}]+")
_EDGE_PUNCTUATION: Final = "-./'+#&"

# Longest first, so 에서는 is tried before 에서 and 에.
_PARTICLES: Final = tuple(
    sorted(
        [
            "에서는",
            "에게서",
            "으로는",
            "으로서",
            "으로써",
            "이라는",
            "에서",
            "에게",
            "한테",
            "으로",
            "까지",
            "부터",
            "처럼",
            "보다",
            "라는",
            "이랑",
            "에는",
            "와는",
            "과는",
            "은",
            "는",
            "이",
            "가",
            "을",
            "를",
            "의",
            "에",
            "와",
            "과",
            "도",
            "만",
            "로",
            "랑",
        ],
        key=len,
        reverse=True,
    )
)


def name_key(text: str) -> str:
    """The lookup key of an entity name or alias: NFKC, case-folded, punctuation-separated
    tokens joined by one space. Callers of ``lookup_entities`` pass keys built with this."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    tokens = (t.strip(_EDGE_PUNCTUATION) for t in _NAME_SEPARATORS.split(folded))
    return " ".join(t for t in tokens if t)


def _is_hangul(char: str) -> bool:
    return "\uac00" <= char <= "\ud7a3"


def word_variants(word: str) -> list[str]:
    """The word, and the word without a trailing Korean particle or English possessive."""
    found = [word]
    if word.endswith("'s") and len(word) > 3:
        found.append(word[:-2])
    if word and _is_hangul(word[-1]):
        for particle in _PARTICLES:
            if word.endswith(particle) and len(word) > len(particle):
                stem = word[: -len(particle)].rstrip("-")
                if stem and stem not in found:
                    found.append(stem)
    return found
