"""How scopes become index filters, so Neo4j ranks only visible chunks.

Two filters, one per index, both written on the same transaction as the chunk:

- ``Chunk.acl_key`` (vector index): one value per chunk, a digest of (namespace, the
  document's sorted scope set). The vector index declares it as a filterable property, and a
  search filters with ``c.acl_key IN $keys`` *inside* the index, where ``$keys`` are the scope
  sets of the namespace that intersect the caller's scopes (``ScopeSet`` nodes). A
  multi-scope document therefore needs no per-scope copies and no per-scope properties.
- ``Chunk.acl_terms`` (full-text index): one decimal token per (namespace, scope). The Lucene
  query requires ``+acl_terms:(t1 OR t2 ...)^0``, so Lucene ranks only chunks that carry one of
  the caller's tokens, and the ``^0`` boost keeps the filter out of the BM25 score. Tokens are
  digits only, so no analyser can alter or drop them (a required clause that analysed to
  nothing would vanish and match everything).

Full text: the ``cjk`` analyser bigrams Hangul but does not stem English ("restart" never
matches "Restarting", measured), and one full-text index has one analyser. So, like the
embedded store, we index an analysed copy (``terms``: Hangul/CJK bigrams as Lucene's CJK
analyser makes them, and Snowball-stemmed lower-cased words, from
:mod:`graphctx.text.lexical`) with Lucene's ``whitespace`` analyser, which keeps
every term as is. Both backends therefore share one vocabulary; only BM25's details differ.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from graphctx.text.lexical import query_terms

ACL_TOKEN_BYTES = 16


def _digest(*parts: object) -> bytes:
    payload = json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.blake2b(payload, digest_size=ACL_TOKEN_BYTES).digest()


def scope_set_key(namespace: str, scopes: Iterable[str]) -> str:
    """The vector-index filter value shared by every chunk of a document."""
    return _digest("scope-set", namespace, sorted(set(scopes))).hex()


def acl_token(namespace: str, scope: str) -> str:
    """A digits-only Lucene token for one (namespace, scope) pair."""
    return str(int.from_bytes(_digest("scope", namespace, scope), "big"))


def acl_terms(namespace: str, scopes: Iterable[str]) -> str:
    """The ``acl_terms`` property of a chunk whose document has ``scopes``."""
    return " ".join(acl_token(namespace, scope) for scope in sorted(set(scopes)))


def quoted_term(term: str) -> str:
    """``term`` as a Lucene phrase on the ``terms`` field (analysed terms hold no spaces)."""
    return "terms:" + '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


def acl_clause(namespace: str, scopes: frozenset[str]) -> str:
    """The required clause that lets Lucene find only chunks visible in ``namespace``."""
    tokens = " OR ".join(acl_token(namespace, scope) for scope in sorted(scopes))
    return f"+acl_terms:({tokens})^0"


def lucene_query(namespace: str, query: str, scopes: frozenset[str]) -> str | None:
    """A Lucene query that ranks only chunks visible in ``namespace`` to ``scopes``.

    None when the query has no searchable term or there are no scopes: nothing can match.
    """
    terms = query_terms(query)
    if not terms or not scopes:
        return None
    text = " ".join(quoted_term(term) for term in terms)
    return f"{acl_clause(namespace, scopes)} +({text})"


def complement_query(namespace: str, terms: Iterable[str], scopes: frozenset[str]) -> str:
    """The chunks visible in ``namespace`` to ``scopes`` that hold none of ``terms``: the
    complement of :func:`lucene_query`'s matches among the visible chunks."""
    return " ".join([acl_clause(namespace, scopes), *(f"-{quoted_term(t)}" for t in terms)])
