"""The relevance floor: a question the visible evidence does not speak to is not answerable.

Search always returns *something* (the vector list has no notion of "no match"); seed 000
counts answering from unrelated chunks as a failure. The floor asks whether any of the
query's content words (function words removed) occurs in the evidence fetched for the
request, all of it visible to the caller, so the answer depends on nothing hidden. A question
none of whose words the visible corpus uses is ``no_evidence``; one word is enough to pass,
because any chunk sharing a query word must stay reachable (the ACL property suite asserts
exactly that: an in-scope match is never crowded out).

``coverage`` — the best share of the query's weighted words one chunk holds, each word
weighted by its rarity among the candidates — is reported with the verdict so an operator can
see how thin the evidence is. Known limit: a question in one language over a corpus in
another shares no words with it and is refused even when the embedder found the right text.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from graphctx.context.text_memo import TextMemo
from graphctx.text.lexical import TermSet, analyze, term_sets_many

__all__ = ["Relevance", "assess_relevance"]


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
    coverage: float  # best share of the query's weighted content words held by one candidate
    terms: int  # content words of the query
    covered: int  # of them, those found in at least one candidate
    named_entities: int = 0  # visible graph entities the query names (seed 004's evidence)

    @property
    def answerable(self) -> bool:
        return self.named_entities > 0 or self.covered > 0

    def explain(self) -> str:
        if self.named_entities:
            return f"the query names {self.named_entities} visible entity(ies): answerable"
        if not self.covered:
            return f"none of the query's {self.terms} content word(s) occurs in visible evidence"
        return (
            f"{self.covered} of the query's {self.terms} content word(s) occur in visible"
            f" evidence; the best chunk covers {self.coverage:.2f} of their weight"
        )


# A chunk's terms are a function of its text, and the same chunks come back request after
# request: analysing each anew was a fifth of a served request's time (graphctx bench http).
CHUNK_TERMS_CACHE: Final = 2_048  # chunk texts, a few MB


def _term_set(text: str) -> TermSet:
    """The analysed terms of ``text``."""
    return term_sets_many([text])[0]


_CHUNK_TERMS: Final = TextMemo(_term_set, CHUNK_TERMS_CACHE)


@dataclass(frozen=True)
class _IndexedTerms:
    """A text's terms as the store indexed them (``index_terms(text)``, space-separated) as a
    membership test: ``term in _IndexedTerms`` exactly when ``term in analyze(text)``
    (no term holds a space, so each is delimited by spaces in the padded string)."""

    padded: str  # " " + terms + " ", or "" for a text without terms

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and f" {term} " in self.padded


def _pool_terms(pool: Sequence[str], indexed: Mapping[str, str]) -> list[Container[str]]:
    """The terms of each text of ``pool``: the store's (``indexed``, by text) where it has
    them, memoised ones looked up, the others analysed together (each distinct word of them
    stemmed once) and memoised."""
    known: list[Container[str] | None] = [
        _IndexedTerms(f" {indexed[text]} " if indexed[text] else "")
        if text in indexed
        else _CHUNK_TERMS.lookup(text)
        for text in pool
    ]
    missing = [text for text, terms in zip(pool, known, strict=True) if terms is None]
    analysed = dict(zip(missing, term_sets_many(missing), strict=True))
    for text, terms in analysed.items():
        _CHUNK_TERMS.remember(terms, text)
    return [
        analysed[text] if terms is None else terms for text, terms in zip(pool, known, strict=True)
    ]


def assess_relevance(
    query: str,
    pool: Sequence[str],
    *,
    named_entities: int = 0,
    indexed: Mapping[str, str] | None = None,
) -> Relevance:
    """Whether the candidates ``pool`` (texts, best first) speak to ``query``; a query that
    names a visible entity of the graph is answerable from that entity's evidence.
    ``indexed``: ``index_terms(text)`` of those texts the store read with their chunks (a
    chunk's :attr:`~graphctx.store.records.ChunkView.text_terms`); the others are analysed."""
    terms = [t for t in dict.fromkeys(analyze(query)) if t not in STOP_TERMS]
    if named_entities:
        return Relevance(1.0, len(terms), len(terms), named_entities)
    if not terms or not pool:
        return Relevance(0.0, len(terms), 0)
    analysed = _pool_terms(pool, indexed or {})
    size = len(analysed)
    frequency = {t: sum(t in chunk for chunk in analysed) for t in terms}
    weight = {t: math.log((size + 1) / (frequency[t] + 0.5)) for t in terms}
    total = sum(weight.values())
    best = max(sum(weight[t] for t in terms if t in chunk) for chunk in analysed) / total
    return Relevance(best, len(terms), sum(1 for t in terms if frequency[t]))
