"""Explicit cross-references: statute articles (Korean and English) and Markdown links.

Korean: "제23조", "제23조의2", "제23조제1항", "「근로자퇴직급여 보장법」 제8조" (another law),
"같은 법 제26조" (the law last named before it), "이 법 제28조" (this law), and ranges
"제23조부터 제26조까지". A bare "제1항" (a paragraph of the same article) is not a reference.
English: "Article 5", "Art. 5(2)", "Section 3(b)", "§ 12". Markdown: ``[text](../other.md)``
to another document (web links and in-page anchors are ignored).

Article numbers are normalised to ``23`` / ``23-2`` so Korean and English keys compare.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

__all__ = [
    "Reference",
    "ReferenceKind",
    "article_key",
    "find_references",
    "parse_article_label",
]

MAX_RANGE: Final = 30  # a "제N조부터 제M조까지" range longer than this is kept as its two ends


class ReferenceKind(StrEnum):
    ARTICLE = "article"  # 조 / Article
    SECTION = "section"  # Section / §
    LINK = "link"  # Markdown link to another document


@dataclass(frozen=True)
class Reference:
    kind: ReferenceKind
    target: str  # normalised article number ("23-2") or the link's resolved relative path
    law: str | None  # the law it points into (None: this document's law / not a statute)
    start: int
    end: int
    paragraph: str | None = None


_KO = re.compile(
    r"(?:「(?P<law>[^」\n]{1,80})」\s*|(?P<same>같은\s*법|동법)\s*|(?P<this>이\s*법)\s*)?"
    r"제\s*(?P<art>\d{1,4})\s*조(?:\s*의\s*(?P<sub>\d{1,3}))?"
    r"(?:\s*제\s*(?P<para>\d{1,3})\s*항)?"
)
_KO_RANGE = re.compile(r"\s*부터\s*$")
_KO_RANGE_END = re.compile(r"^\s*까지")
_EN = re.compile(
    r"(?:\b(?P<word>Articles?|Art\.|Sections?|Sec\.)|(?P<sign>§§?))\s*(?P<art>\d{1,4}[A-Za-z]?)"
    r"(?:\((?P<para>[0-9A-Za-z]{1,4})\))?",
)
_MD_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_LABEL = re.compile(
    r"^\s*(?:제\s*(?P<ko>\d{1,4})\s*조(?:\s*의\s*(?P<sub>\d{1,3}))?"
    r"|(?P<word>Article|Art\.|Section|Sec\.|§)\s*(?P<en>\d{1,4}[A-Za-z]?)|(?P<bare>\d{1,4}))"
)


def article_key(kind: ReferenceKind, law: str, number: str) -> str:
    """The node id of an article or section: ``article:<law>:<number>``."""
    return f"{kind.value}:{law}:{number}"


def parse_article_label(label: str) -> tuple[ReferenceKind, str] | None:
    """ "제23조의2" -> (article, "23-2"); "Section 3" -> (section, "3"); "5" -> (article, "5")."""
    match = _LABEL.match(label)
    if match is None:
        return None
    if match.group("ko"):
        sub = match.group("sub")
        return ReferenceKind.ARTICLE, match.group("ko") + (f"-{sub}" if sub else "")
    if match.group("en"):
        word = match.group("word")
        kind = ReferenceKind.ARTICLE if word.startswith("Art") else ReferenceKind.SECTION
        return kind, match.group("en").lower()
    return ReferenceKind.ARTICLE, match.group("bare")


def _korean(text: str) -> list[Reference]:
    found: list[Reference] = []
    last_named: str | None = None
    previous: re.Match[str] | None = None
    for match in _KO.finditer(text):
        law: str | None = None
        if match.group("law"):
            law = " ".join(match.group("law").split())
            last_named = law
        elif match.group("same"):
            law = last_named
        sub = match.group("sub")
        number = match.group("art") + (f"-{sub}" if sub else "")
        found.append(
            Reference(
                ReferenceKind.ARTICLE, number, law, match.start(), match.end(), match.group("para")
            )
        )
        if (
            previous is not None
            and not sub
            and _KO_RANGE.search(text[previous.end() : match.start()])
        ):
            low = int(previous.group("art"))
            high = int(match.group("art"))
            if _KO_RANGE_END.match(text[match.end() :]) and 0 < high - low <= MAX_RANGE:
                start = previous.start()
                found.extend(
                    Reference(ReferenceKind.ARTICLE, str(n), law, start, match.end())
                    for n in range(low + 1, high)
                )
        previous = match
    return found


def _english(text: str) -> list[Reference]:
    found = []
    for match in _EN.finditer(text):
        word = match.group("word") or ""
        kind = ReferenceKind.ARTICLE if word.startswith("Art") else ReferenceKind.SECTION
        found.append(
            Reference(
                kind,
                match.group("art").lower(),
                None,
                match.start(),
                match.end(),
                match.group("para"),
            )
        )
    return found


def _links(text: str, own_path: str | None) -> list[Reference]:
    found = []
    for match in _MD_LINK.finditer(text):
        target = match.group("target").split("#", 1)[0]
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
            continue
        base = posixpath.dirname(own_path) if own_path else ""
        resolved = posixpath.normpath(posixpath.join(base, target))
        if resolved.startswith(".."):
            continue
        found.append(Reference(ReferenceKind.LINK, resolved, None, match.start(), match.end()))
    return found


def find_references(text: str, *, own_path: str | None = None) -> list[Reference]:
    """Every explicit reference in ``text``, in order of appearance.

    ``own_path`` is the document's path relative to the ingest root, to resolve relative
    Markdown links. A reference's ``law`` is the law it names explicitly (or through "같은
    법"); ``None`` means this document's own law.
    """
    found = [*_korean(text), *_english(text), *_links(text, own_path)]
    return sorted(found, key=lambda r: (r.start, r.kind.value, r.target))
