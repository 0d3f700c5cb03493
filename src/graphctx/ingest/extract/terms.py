"""Defined terms: where a corpus defines a term, and which items then use it.

Definitions recognised (the defining item is the term's *definer*):

- Korean statutes: a definition list ``"근로자"란 ... 말한다`` (also ``“…”이란``), and an
  inline definition ``(이하 "부당해고등"이라 한다)``. A term defined only for the defining
  article itself (``이하 이 조에서 "…"라 한다``) is local and skipped.
- English: ``"Personal Data" means ...`` (also *shall mean*, *refers to*, *has the meaning*),
  ``(the "Processor")`` / ``(hereinafter "the Act")``, and glossary lines
  ``**Term**: ...`` / ``- **Term** — ...``.

An item *uses* a term when the term occurs in it at a word start (so ``임금`` is not found
inside ``평균임금``), outside any longer defined term (``근로자대표`` is not a use of
``근로자``); English terms match case-sensitively on word boundaries. Terms are matched
within their collection only (a statute's terms are not another statute's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DefinedTerm", "capitalised_terms", "find_definitions", "term_users"]

_QUOTED = r"[\"“]([^\"“”\n]{1,40})[\"”]"
_KO_LIST = re.compile(_QUOTED + r"\s*(?:이)?란\s")
_KO_INLINE = re.compile(
    r"이하\s*(?P<local>[^\"“”()\n]{0,20}?)\s*" + _QUOTED + r"\s*(?:이)?라\s*한다"
)
_KO_LOCAL = re.compile(r"이\s*(?:조|항|호|목)\s*에서")
_EN_MEANS = re.compile(_QUOTED + r",?\s+(?:means|shall mean|refers to|has the meaning)\b")
_EN_PAREN = re.compile(
    r"\((?:the\s+|a\s+|an\s+|each,?\s+(?:a|an)\s+|hereinafter(?:\s+referred\s+to\s+as)?\s+"
    r"(?:the\s+)?)?" + _QUOTED + r"\)"
)
_GLOSSARY = re.compile(r"^\s*(?:[-*+]\s+)?\*\*([^*\n]{1,40})\*\*\s*[:\u2014\u2013-]", re.M)
_WORDLIKE = re.compile(r"[\w가-힣]")
# Two to five capitalised words, joined by spaces (a lower-case "of"/"the" may sit inside).
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[- ](?:(?:of|the|for|de|von|van) )?[A-Z][a-z]+){1,4}\b")


@dataclass(frozen=True)
class DefinedTerm:
    term: str
    definer: str  # key of the item that defines it
    collection: str


def _usable(term: str) -> bool:
    stripped = term.strip()
    return len(stripped) >= 2 and not stripped.isdigit() and bool(_WORDLIKE.search(stripped))


def find_definitions(items: Sequence[tuple[str, str, str]]) -> list[DefinedTerm]:
    """The terms defined in ``items`` ((key, collection, text)), first definer wins."""
    found: dict[tuple[str, str], DefinedTerm] = {}
    for key, collection, text in items:
        terms: list[str] = []
        terms += _KO_LIST.findall(text)
        for match in _KO_INLINE.finditer(text):
            if not _KO_LOCAL.search(match.group("local")):
                terms.append(match.group(2))
        terms += _EN_MEANS.findall(text)
        terms += _EN_PAREN.findall(text)
        terms += _GLOSSARY.findall(text)
        for term in terms:
            term = " ".join(term.split())
            if _usable(term):
                found.setdefault((collection, term), DefinedTerm(term, key, collection))
    return sorted(found.values(), key=lambda t: (t.collection, t.term))


def _pattern(term: str) -> re.Pattern[str]:
    escaped = re.escape(term)
    if term[-1:].isascii() and term[-1:].isalnum():
        return re.compile(r"(?<![\w가-힣])" + escaped + r"(?![A-Za-z0-9])")
    return re.compile(r"(?<![\w가-힣])" + escaped)


def term_users(
    terms: Sequence[DefinedTerm], items: Sequence[tuple[str, str, str]]
) -> dict[DefinedTerm, list[str]]:
    """Per term, the keys of the items (its definer excluded) that use it, in item order."""
    by_collection: dict[str, list[tuple[DefinedTerm, re.Pattern[str]]]] = {}
    for term in sorted(terms, key=lambda t: (-len(t.term), t.term)):  # longest first
        by_collection.setdefault(term.collection, []).append((term, _pattern(term.term)))
    users: dict[DefinedTerm, list[str]] = {term: [] for term in terms}
    for key, collection, text in items:
        # Each found occurrence is blanked so a shorter term inside it ("근로자" in
        # "근로자대표") is not counted.
        remaining = text
        for term, pattern in by_collection.get(collection, ()):
            if term.term not in remaining or pattern.search(remaining) is None:
                continue
            remaining = pattern.sub(lambda m: "\x00" * len(m.group(0)), remaining)
            if key != term.definer:
                users[term].append(key)
    return users


def capitalised_terms(
    items: Sequence[tuple[str, str, str]], exclude: frozenset[str] = frozenset()
) -> dict[DefinedTerm, list[str]]:
    """Capitalised multi-word terms of English text ("Fast Forward Games"), with the items
    using each, in item order. They have no definer (``definer`` is empty). ``exclude``:
    names already linked otherwise (the documents' titles are entities already)."""
    users: dict[tuple[str, str], list[str]] = {}
    for key, collection, text in items:
        for term in dict.fromkeys(m.group(0) for m in _CAPITALISED.finditer(text)):
            if term not in exclude:
                users.setdefault((collection, term), []).append(key)
    return {
        DefinedTerm(term, "", collection): keys
        for (collection, term), keys in sorted(users.items())
    }
