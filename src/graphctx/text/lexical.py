"""The lexical analyser both full-text backends index and query with (Korean and English).

FTS5's ``unicode61`` splits only at spaces and punctuation, so a Korean word with a particle
attached (부당해고를) never matches its stem (해고), and the trigram tokenizer never matches
two-syllable words; Lucene's ``cjk`` analyser bigrams Hangul but does not stem English. Both
stores therefore index an analysed copy of each chunk: Hangul (and other CJK) runs become
overlapping character bigrams, as Lucene's CJK analyzer does; other words are lower-cased and
stemmed with Snowball English (restarting -> restart). Queries are analysed the same way, so
both backends share one vocabulary and BM25 ranks by how many bigrams and words match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import Stemmer

__all__ = [
    "ANALYSER",
    "MAX_QUERY_TERMS",
    "TermSet",
    "analyze",
    "index_terms",
    "index_terms_many",
    "query_terms",
    "term_sets_many",
]

_CJK = r"\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_APOSTROPHES = "'\u2019"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}_]+(?:[{_APOSTROPHES}][^\W{_CJK}_]+)*", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")
_CJK_PAIR = re.compile(rf"[{_CJK}]{{2}}")
MAX_QUERY_TERMS = 64
# Names what analyze returns for every text. Change it (and the SQLite SCHEMA_VERSION, so an
# older graphctx refuses a newer file) whenever analyze's output changes for any text: a store
# created under another name may hold terms this analyser would not write.
ANALYSER = "lexical-1"


def analyze(text: str) -> list[str]:
    """Split text into index terms: CJK bigrams and lower-cased words."""
    terms: list[str] = []
    for token in _TOKEN.findall(text):
        if _IS_CJK.match(token):
            terms.extend(_cjk_terms(token))
        else:
            terms.append(_stem(_word(token)))
    return terms


def _cjk_terms(token: str) -> list[str]:
    """A CJK run's terms: its character bigrams (a single character stands for itself)."""
    return [token[i : i + 2] for i in range(len(token) - 1)] or [token]


def _word(token: str) -> str:
    """A non-CJK token as the stemmer takes it: lower case, typographic apostrophe folded."""
    return token.lower().replace("\u2019", "'")


# Snowball English in C (PyStemmer): the same stems as the pure-Python snowballstemmer
# package, about a hundred times faster. Its word cache is off: a cache shared by every
# request would be faster only for words some earlier request (of any tenant) stemmed, which
# is a timing signal, and the C stemmer is faster without it.
_STEMMER = Stemmer.Stemmer("english", 0)


def _stem(word: str) -> str:
    stem: str = _STEMMER.stemWord(word)
    return stem


def index_terms(text: str) -> str:
    """The analysed text stored in the FTS5 column."""
    return " ".join(analyze(text))


def index_terms_many(texts: Sequence[str]) -> list[str]:
    """``index_terms`` of each text, analysed together (a write batch's chunks): each distinct
    token once, its words stemmed in one C call. The memo lives for this call only (see the
    stemmer's note above)."""
    token_lists = [_TOKEN.findall(text) for text in texts]
    distinct = {token for tokens in token_lists for token in tokens}
    terms_of = _word_stems(distinct)  # token -> its terms, space-separated
    for token in distinct.difference(terms_of):  # a CJK run
        terms_of[token] = " ".join(_cjk_terms(token))
    return [" ".join(map(terms_of.__getitem__, tokens)) for tokens in token_lists]


def _word_stems(tokens: Iterable[str]) -> dict[str, str]:
    """The stem of each word among the distinct ``tokens`` (CJK runs are left out), all in
    one C call."""
    words = [token for token in tokens if token.isascii() or not _IS_CJK.match(token)]
    return dict(zip(words, _STEMMER.stemWords([_word(word) for word in words]), strict=True))


@dataclass(frozen=True)
class TermSet:
    """The distinct terms of ``analyze(text)`` as a membership test, without building the
    bigrams: ``term in TermSet`` exactly when ``term in analyze(text)``.

    The stems and the lone CJK characters (a one-character run stands for itself) are kept
    in ``words``. Every other term is a bigram of a CJK run, and the bigrams of all runs are
    exactly the text's substrings of two adjacent CJK characters (a run is a maximal stretch
    of them, so two adjacent ones always lie in the same run): such a term is looked up in
    the text itself."""

    text: str
    words: frozenset[str]

    def __contains__(self, term: object) -> bool:
        if term in self.words:
            return True
        return isinstance(term, str) and bool(_CJK_PAIR.fullmatch(term)) and term in self.text


def term_sets_many(texts: Sequence[str]) -> list[TermSet]:
    """The :class:`TermSet` of each text, analysed together (a request's chunks): each
    distinct token once, its words stemmed in one C call (a memo for this call only)."""
    token_sets = [set(_TOKEN.findall(text)) for text in texts]
    distinct = set().union(*token_sets)
    terms_of = _word_stems(distinct)
    terms_of.update((token, token) for token in distinct.difference(terms_of) if len(token) == 1)
    return [
        TermSet(text, frozenset(terms_of[token] for token in tokens if token in terms_of))
        for text, tokens in zip(texts, token_sets, strict=True)
    ]


def query_terms(query: str) -> list[str]:
    """The query's distinct analysed terms, in order, at most MAX_QUERY_TERMS."""
    seen: dict[str, None] = {}
    for term in analyze(query):
        seen.setdefault(term, None)
        if len(seen) == MAX_QUERY_TERMS:
            break
    return list(seen)
