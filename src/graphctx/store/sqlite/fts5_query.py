"""FTS5 MATCH expressions over analysed terms, and the pruning of over-common query terms.

The index holds :func:`~graphctx.text.lexical.index_terms`, so a query is its distinct
analysed terms (:func:`~graphctx.text.lexical.query_terms`) OR-ed, each quoted, and the
stored terms are exactly the FTS5 vocabulary, which lets the store prune over-common terms.
"""

from __future__ import annotations

from graphctx.text.lexical import query_terms

__all__ = [
    "COMMON_TERM_MIN_CHUNKS",
    "COMMON_TERM_SHARE",
    "KEEP_RAREST",
    "match_expression",
    "or_expression",
    "prune_common_terms",
]

COMMON_TERM_SHARE = 0.05  # a query term in more than this share of all chunks is pruned ...
COMMON_TERM_MIN_CHUNKS = 1_000  # ... unless it is in fewer chunks than this
KEEP_RAREST = 3


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
