"""Seed 001's concept types, guessed offline from the members' titles and text.

Each type has cue words (Korean statute wording and plain English). A member's title
counts ``TITLE_WEIGHT`` per cue type it shows, its text one per cue type it shows (the
obligation cue, present in almost every article, counts ``OBLIGATION_TEXT_WEIGHT``). The
type with the highest total wins, ties in the order of :data:`CUES`; no cue at all leaves
the concept untyped. ``definition`` is given to defined-term concepts by their extractor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from graphctx.ingest.extract.items import ConceptItem

__all__ = ["CUES", "concept_type"]

TITLE_WEIGHT: Final = 3.0
OBLIGATION_TEXT_WEIGHT: Final = 0.25
MIN_SCORE: Final = 1.0

CUES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    (
        "penalty",
        re.compile(
            r"벌칙|벌금|과태료|징역|양벌|이행강제금|가산세|\bpenalt|\bfines?\b|imprisonment|sanction",
            re.I,
        ),
    ),
    (
        "calculation",
        re.compile(
            r"산정|계산|금액|세율|세액|공제|수당|가산|이자|\d+분의\s?\d+|퍼센트|곱한|나눈"
            r"|calculat|\bamount|\brate\b|percent",
            re.I,
        ),
    ),
    (
        "procedure",
        re.compile(
            r"신청|절차|신고|통지|제출|심사|명령|확정|재심|소송|허가|인가|승인|등록|구제"
            r"|\bappl(?:y|ication)|procedure|notif|\bnotice|submit|appeal|\bfil(?:e|ing)\b",
            re.I,
        ),
    ),
    (
        "right",
        re.compile(
            r"청구할 수 있|받을 수 있|권리|보장|휴가|휴일|휴게|보호"
            r"|\brights?\b|entitled|may (?:request|claim)",
            re.I,
        ),
    ),
    (
        "obligation",
        re.compile(r"하여야 한다|아니 된다|못한다|금지|의무|\bshall\b|\bmust\b|prohibit", re.I),
    ),
)


def concept_type(members: Sequence[ConceptItem]) -> str | None:
    """The seed type the members' wording points to, or ``None`` when nothing does."""
    scores = dict.fromkeys((name for name, _ in CUES), 0.0)
    for item in members:
        for name, cue in CUES:
            if cue.search(item.title):
                scores[name] += TITLE_WEIGHT
            if cue.search(item.text):
                scores[name] += OBLIGATION_TEXT_WEIGHT if name == "obligation" else 1.0
    best = max(scores, key=lambda name: scores[name])  # first of the highest, in CUES order
    return best if scores[best] >= MIN_SCORE else None
