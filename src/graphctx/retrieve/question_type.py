"""Question types decide how far the graph may expand (seed 001: graph noise costs).

Rules, first match wins: relational > calculation > procedure > right > simple lookup >
general. Cue words are English (word-bounded) and Korean (substrings, with a few guarded
against compounds such as 근로관계). A relational question also carries the direction of the
relations it asks about: "what depends on X" / "X에 의존하는 서비스" walks incoming relations,
"dependencies of X" / "X의 의존성" outgoing ones, "connected to X" both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from graphctx.store.records import Direction

__all__ = ["QuestionClass", "QuestionType", "classify_question"]


class QuestionType(StrEnum):
    RELATIONAL = "relational"
    CALCULATION = "calculation"
    PROCEDURE = "procedure"
    RIGHT = "right"
    SIMPLE_LOOKUP = "simple_lookup"
    GENERAL = "general"


@dataclass(frozen=True)
class QuestionClass:
    type: QuestionType
    cues: tuple[str, ...] = ()
    direction: Direction = Direction.BOTH


_HANGUL_BEFORE: Final = r"(?<![\uac00-\ud7a3])"


def _en(*words: str) -> list[re.Pattern[str]]:
    return [re.compile(rf"\b{w}\b", re.IGNORECASE) for w in words]


def _ko(*words: str) -> list[re.Pattern[str]]:
    return [re.compile(w) for w in words]


_CUES: Final[tuple[tuple[QuestionType, list[re.Pattern[str]]], ...]] = (
    (
        QuestionType.RELATIONAL,
        _en(
            r"connected (to|with)",
            r"connections?",
            r"depend(s|ing|encies|ency|ents?)?",
            r"relies on",
            r"related to",
            r"relationships?",
            r"upstream",
            r"downstream",
            r"blast radius",
            r"who owns",
            r"owners? of",
            r"owned by",
            r"(what|which \w+) (uses|use|calls|call)",
            r"impact(ed)? (of|by|on)",
        )
        + _ko(
            "연결",
            "의존",
            _HANGUL_BEFORE + "관계",
            "에 영향",
            "영향을 (주|받)",
            "소유",
            "담당자",
            "호출하는",
            "사용하는 (서비스|시스템)",
        ),
    ),
    (
        QuestionType.CALCULATION,
        _en(
            r"how (much|many)",
            r"calculat(e|ed|ion|ing)",
            r"compute[sd]?",
            r"amount",
            r"rate of",
            r"percent(age)?",
            r"total",
        )
        + _ko("얼마", "계산", "금액", "몇", "세율", "수당", "산정", "산출", "가산", "비율", "일수"),
    ),
    (
        QuestionType.PROCEDURE,
        _en(
            r"how (do|can|should) (i|we|you)",
            r"how to",
            r"steps?",
            r"procedures?",
            r"process (for|of|to)",
            r"what (should|do) (i|we) do",
            r"apply for",
            r"file (a|an)",
            r"restart(ing)?",
            r"roll ?back",
        )
        + _ko("어떻게", "절차", "방법", "해야", "하나요", "신청", "순서", "대응"),
    ),
    (
        QuestionType.RIGHT,
        _en(
            r"entitled",
            r"eligible",
            r"right to",
            r"rights",
            r"(can|may) (i|we|an? \w+)",
            r"allowed to",
            r"protect(ed|ion)",
        )
        + _ko("권리", "받을 수", "할 수 있", "청구", "보호", "보장", "자격"),
    ),
    (
        QuestionType.SIMPLE_LOOKUP,
        [
            re.compile(r"^\s*(what is|what's|what are|who is|where is|define)\b", re.I),
            *_en(r"definition", r"meaning of"),
            *_ko("뜻", "정의", "무엇", "뭐야", "이란", "란\\?"),
            re.compile(
                r"^\s*(제\s*\d+\s*조(의\s*\d+)?|article \d+|section \d+\w*)\s*\??\s*$", re.I
            ),
        ],
    ),
)

_INCOMING: Final = [
    re.compile(r"\b(what|which|who)\s+(\w+\s+)?(depends?|relies?|rely)\s+on\b", re.I),
    re.compile(r"\b(dependents|downstream|consumers? of|callers? of)\b", re.I),
    re.compile(r"\b(what|which \w+|who)\s+(uses|use|calls|call)\b", re.I),
    re.compile(r"(에|을|를) (의존|사용|호출)하는"),
]
_OUTGOING: Final = [
    re.compile(r"\b(dependencies|dependency|upstream)\b", re.I),
    re.compile(r"\b(depends?|relies?|rely)\s+on\b", re.I),
    re.compile(r"(의 의존|의존성|(가|이) 의존하는)"),
]


def _direction(query: str) -> Direction:
    if any(p.search(query) for p in _INCOMING):
        return Direction.IN
    if any(p.search(query) for p in _OUTGOING):
        return Direction.OUT
    return Direction.BOTH


def classify_question(query: str) -> QuestionClass:
    """The question's type (first rule that matches), the cues that matched, the direction."""
    for question_type, patterns in _CUES:
        cues = tuple(m.group(0).strip() for p in patterns if (m := p.search(query)))
        if cues:
            direction = (
                _direction(query) if question_type is QuestionType.RELATIONAL else Direction.BOTH
            )
            return QuestionClass(question_type, cues, direction)
    return QuestionClass(QuestionType.GENERAL)
