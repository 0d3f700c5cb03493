"""The relevance floor: a question the visible evidence does not speak to is not answerable.

Search always returns *something*; seed 000 counts answering from unrelated chunks as a
failure. Fused scores are relative (the best candidate is always 1), so the floor needs an
absolute measure: how much of the question the best evidence covers.

``evidence_coverage`` weighs each content term of the query (function words removed) by its
inverse frequency among the candidate pool — the chunks fetched for this request, all of
them visible to the caller, so the measure depends on nothing hidden. A term that appears in
few candidates is specific and weighs much; one that appears in almost every candidate, or a
term of the query found in none, still counts in the denominator: a question whose specific
words the visible corpus never uses is not covered. The coverage is the best share reached by
one of the top ``COVERAGE_DEPTH`` candidates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from graphctx.store.sqlite.lexical import analyze

__all__ = ["COVERAGE_DEPTH", "RELEVANCE_FLOOR", "Relevance", "assess_relevance"]

COVERAGE_DEPTH: Final = 3  # the top candidates whose coverage counts
RELEVANCE_FLOOR: Final = 0.05  # below this share of the query's weighted terms: no evidence

_ENGLISH_FUNCTION_WORDS: Final = """
a an the of in on at to for from by with and or not no nor is are was were be been being am do
does did doing have has had having what which who whom whose when where why how that this these
those it its as into onto than then there their theirs his her hers he she they them i we you me
my mine our ours your yours us can could should would may might will shall must about after
before over under again further once here all any both each few more most other some such only
own same so too very just also if but because until while during between through above below up
down out off s t tell know give get find please
"""
# Korean question endings and function words, as the analyser's character bigrams produce them.
_KOREAN_FUNCTION_WORDS: Final = """
무엇 어떻 어떤 어디 언제 누구 얼마 왜 어느 인가 가요 나요 하나 니까 습니 입니 있나 는지 은지 할까
까요 세요 해야 하는 있는 되나 되는 는가 한가 이란 란무 엇인 엇이 떻게 떤경 요?
"""
STOP_TERMS: Final = frozenset(analyze(_ENGLISH_FUNCTION_WORDS)) | frozenset(
    _KOREAN_FUNCTION_WORDS.split()
)


@dataclass(frozen=True)
class Relevance:
    coverage: float  # best share of the query's weighted content terms among the top candidates
    floor: float
    terms: int  # content terms of the query
    named_entities: int = 0  # visible graph entities the query names (seed 004's evidence)

    @property
    def answerable(self) -> bool:
        if self.named_entities:
            return True
        return self.terms > 0 and self.coverage >= self.floor

    def explain(self) -> str:
        if self.named_entities:
            return f"the query names {self.named_entities} visible entity(ies): answerable"
        verdict = "meets" if self.answerable else "is below"
        return (
            f"best evidence covers {self.coverage:.2f} of the query's {self.terms} weighted"
            f" term(s); {verdict} the relevance floor {self.floor:.2f}"
        )


def assess_relevance(
    query: str,
    pool: Sequence[str],
    *,
    floor: float = RELEVANCE_FLOOR,
    depth: int = COVERAGE_DEPTH,
    named_entities: int = 0,
) -> Relevance:
    """How well the top of ``pool`` (candidate texts, best first) covers ``query``; a query
    that names a visible entity of the graph is answerable from that entity's evidence."""
    terms = [t for t in dict.fromkeys(analyze(query)) if t not in STOP_TERMS]
    if named_entities:
        return Relevance(1.0, floor, len(terms), named_entities)
    if not terms or not pool:
        return Relevance(0.0, floor, len(terms))
    analysed = [frozenset(analyze(text)) for text in pool]
    size = len(analysed)
    weight = {
        t: math.log((size + 1) / (sum(t in chunk for chunk in analysed) + 0.5)) for t in terms
    }
    total = sum(weight.values())
    if total <= 0.0:
        return Relevance(0.0, floor, len(terms))
    best = max(sum(weight[t] for t in terms if t in chunk) / total for chunk in analysed[:depth])
    return Relevance(best, floor, len(terms))
