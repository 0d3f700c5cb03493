"""Query terms as entity lookup keys: word n-grams, Korean particles and possessives stripped.

"물류서버-A에 연결된 시스템은?" yields ``물류서버-a`` among its keys; "dependencies of
payment-service's API" yields ``payment-service``. Keys are built with the store's
:func:`~graphctx.store.records.name_key`, so they compare equal to stored names and aliases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from graphctx.store.records import EntityMatch, name_key

__all__ = [
    "DEFAULT_ENTITY_TYPE_ORDER",
    "MAX_KEY_WORDS",
    "order_matches",
    "query_keys",
    "word_variants",
]

MAX_KEY_WORDS: Final = 8  # longest name, in words, a query n-gram may match
MAX_KEYS: Final = 400
DEFAULT_ENTITY_TYPE_ORDER: Final = ("System", "Service", "Person")

# Longest first, so 에서는 is tried before 에서 and 에.
_PARTICLES: Final = tuple(
    sorted(
        [
            "에서는",
            "에게서",
            "으로는",
            "으로서",
            "으로써",
            "이라는",
            "에서",
            "에게",
            "한테",
            "으로",
            "까지",
            "부터",
            "처럼",
            "보다",
            "라는",
            "이랑",
            "에는",
            "와는",
            "과는",
            "은",
            "는",
            "이",
            "가",
            "을",
            "를",
            "의",
            "에",
            "와",
            "과",
            "도",
            "만",
            "로",
            "랑",
        ],
        key=len,
        reverse=True,
    )
)
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


def _is_hangul(char: str) -> bool:
    return "\uac00" <= char <= "\ud7a3"


def word_variants(word: str) -> list[str]:
    """The word, and the word without a trailing Korean particle or English possessive."""
    found = [word]
    if word.endswith("'s") and len(word) > 3:
        found.append(word[:-2])
    if word and _is_hangul(word[-1]):
        for particle in _PARTICLES:
            if word.endswith(particle) and len(word) > len(particle):
                stem = word[: -len(particle)].rstrip("-")
                if stem and stem not in found:
                    found.append(stem)
    return found


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
