"""Query terms as entity lookup keys: word n-grams, Korean particles and possessives stripped.

"물류서버-A에 연결된 시스템은?" yields ``물류서버-a`` among its keys; "dependencies of
payment-service's API" yields ``payment-service``. Keys are built with the store's
:func:`~graphctx.text.names.name_key`, so they compare equal to stored names and aliases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from graphctx.store.records import EntityMatch
from graphctx.text.names import name_key, word_variants

__all__ = [
    "DEFAULT_ENTITY_TYPE_ORDER",
    "MAX_KEY_WORDS",
    "order_matches",
    "query_keys",
]

MAX_KEY_WORDS: Final = 8  # longest name, in words, a query n-gram may match
MAX_KEYS: Final = 400
DEFAULT_ENTITY_TYPE_ORDER: Final = ("System", "Service", "Person")

_STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "with",
        "you",
        "your",
        "무엇",
        "어떤",
        "어떻게",
        "누가",
        "언제",
        "어디",
    ]
)


def query_keys(query: str, max_words: int = MAX_KEY_WORDS) -> list[str]:
    """Distinct lookup keys for every word n-gram of the query, shortest first."""
    words = name_key(query).split()
    keys: dict[str, None] = {}
    for size in range(1, max_words + 1):
        for start in range(len(words) - size + 1):
            head = words[start : start + size - 1]
            if size == 1 and words[start] in _STOP_WORDS:
                continue
            for last in word_variants(words[start + size - 1]):
                key = " ".join([*head, last])
                if len(key) >= 2:
                    keys.setdefault(key, None)
                if len(keys) >= MAX_KEYS:
                    return list(keys)
    return list(keys)


def order_matches(
    matches: Sequence[EntityMatch], type_order: Sequence[str] = DEFAULT_ENTITY_TYPE_ORDER
) -> list[EntityMatch]:
    """Configured node types first (System -> Service -> Person), then other types; within
    a type, longer keys (more specific names) and more relations first."""
    rank = {t.casefold(): i for i, t in enumerate(type_order)}

    def key(m: EntityMatch) -> tuple[int, int, int, str]:
        typed = rank.get((m.node_type or "").casefold(), len(rank))
        return (typed, -len(m.key), -m.relation_count, m.node_id)

    return sorted(matches, key=key)
