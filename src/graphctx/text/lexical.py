"""Lexical analysis for the embedded full-text index (Korean and English).

FTS5's ``unicode61`` splits only at spaces and punctuation, so a Korean word with a particle
attached (부당해고를) never matches its stem (해고), and the trigram tokenizer never matches
two-syllable words. We therefore index an analysed copy of each chunk: Hangul (and other CJK)
runs become overlapping character bigrams, as Lucene's CJK analyzer does; other words are
lower-cased and stemmed with Snowball English (restarting -> restart). Queries are analysed the
same way and OR-ed, so BM25 ranks by how many bigrams and words match, and the stored terms
are exactly the FTS5 vocabulary, which lets the store prune over-common query terms.
"""

from __future__ import annotations

import functools
import re

import snowballstemmer

_CJK = r"\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_APOSTROPHES = "'\u2019"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}_]+(?:[{_APOSTROPHES}][^\W{_CJK}_]+)*", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")
MAX_QUERY_TERMS = 64
COMMON_TERM_SHARE = 0.05  # a query term in more than this share of all chunks is pruned ...
COMMON_TERM_MIN_CHUNKS = 1_000  # ... unless it is in fewer chunks than this
KEEP_RAREST = 3


def analyze(text: str) -> list[str]:
    """Split text into index terms: CJK bigrams and lower-cased words."""
    terms: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if _IS_CJK.match(token):
            if len(token) == 1:
                terms.append(token)
            else:
                terms.extend(token[i : i + 2] for i in range(len(token) - 1))
        else:
            terms.append(_stem(token.lower().replace("\u2019", "'")))
    return terms


_STEMMER = snowballstemmer.stemmer("english")
STEM_CACHE_WORDS = 200_000


@functools.lru_cache(maxsize=STEM_CACHE_WORDS)
def _stem(word: str) -> str:
    stem: str = _STEMMER.stemWord(word)
    return stem


def index_terms(text: str) -> str:
    """The analysed text stored in the FTS5 column."""
    return " ".join(analyze(text))


def query_terms(query: str) -> list[str]:
    """The query's distinct analysed terms, in order, at most MAX_QUERY_TERMS."""
    seen: dict[str, None] = {}
    for term in analyze(query):
        seen.setdefault(term, None)
        if len(seen) == MAX_QUERY_TERMS:
            break
    return list(seen)


def or_expression(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression OR-ing the given terms, or None if there are none."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def match_expression(query: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the query's distinct terms, or None if it has none."""
    return or_expression(query_terms(query))


def prune_common_terms(
    terms: list[str], document_frequency: dict[str, int], total_chunks: int
) -> list[str]:
    """Drop terms found in too many chunks: BM25 gives them ~0 weight, yet FTS5 must score
    every chunk they match. Terms no chunk contains are dropped too; if every term is common,
    the KEEP_RAREST rarest survive."""
    cutoff = max(COMMON_TERM_MIN_CHUNKS, COMMON_TERM_SHARE * total_chunks)
    present = [t for t in terms if document_frequency.get(t, 0) > 0]
    kept = [t for t in present if document_frequency[t] <= cutoff]
    if kept:
        return kept
    return sorted(present, key=lambda t: (document_frequency[t], t))[:KEEP_RAREST]
