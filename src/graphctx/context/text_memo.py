"""Memos of pure functions of a chunk's text, partitioned by who may see the chunk.

The packer and the relevance check compute the same things of the same chunks request after
request (terms, safe cut points, neutralised delimiters, MinHash shingles), so they memoise
them. A memo every request shares would be a timing oracle: a caller who writes a guessed text
into their own namespace or scope, and retrieves it, is answered faster when a request they
cannot see processed that text lately. So an entry is keyed by the text *and its partition*:
the namespace and scopes of the chunk it came from (:func:`text_memo_partitions`, entered by
the retrieval tail for the chunks of one request). Two chunks with the same namespace and
scopes are visible to exactly the same principals, so a hit only ever reuses work on a chunk
the caller can see. A text with no partition (a query, a truncated prefix, anything outside a
retrieval) is computed, not memoised.

The partitions share one bound per memo (least recently used first out), so one partition's
volume can still push another's entries out: that tells a caller how busy the service is, not
what anybody else can see (docs/security.md).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Generic, ParamSpec, TypeVar

__all__ = ["TextMemo", "text_memo", "text_memo_partitions"]

P = ParamSpec("P")
R = TypeVar("R")

_NONE: Mapping[str, Hashable] = MappingProxyType({})
_PARTITIONS: ContextVar[Mapping[str, Hashable]] = ContextVar(
    "graphctx_text_memo_partitions", default=_NONE
)


@contextmanager
def text_memo_partitions(partitions: Mapping[str, Hashable]) -> Iterator[None]:
    """Until the block ends, memoise each text of ``partitions`` in its partition's entries
    (and nothing else)."""
    token = _PARTITIONS.set(partitions)
    try:
        yield
    finally:
        _PARTITIONS.reset(token)


class TextMemo(Generic[P, R]):
    """``function`` of a text (its first argument) memoised per partition, at most ``maxsize``
    entries in all."""

    def __init__(self, function: Callable[P, R], maxsize: int) -> None:
        self._function = function
        self._maxsize = maxsize
        self._entries: OrderedDict[Hashable, R] = OrderedDict()
        self._lock = threading.Lock()
        functools.update_wrapper(self, function)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        key = self._key(args, kwargs)
        if key is None:
            return self._function(*args, **kwargs)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        value = self._function(*args, **kwargs)
        self._store(key, value)
        return value

    def lookup(self, *args: P.args, **kwargs: P.kwargs) -> R | None:
        """The memoised value of these arguments in their text's partition, or None; nothing
        is computed. For a caller that computes the value itself, with byproducts it keeps."""
        key = self._key(args, kwargs)
        if key is None:
            return None
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        return None

    def remember(self, value: R, *args: P.args, **kwargs: P.kwargs) -> None:
        """Memoise ``value``, which must be what the function returns for these arguments,
        in their text's partition (a text with no partition is not memoised)."""
        key = self._key(args, kwargs)
        if key is not None:
            self._store(key, value)

    def _store(self, key: Hashable, value: R) -> None:
        with self._lock:
            self._entries[key] = value
            if len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)

    @staticmethod
    def _key(args: tuple[object, ...], kwargs: dict[str, object]) -> Hashable | None:
        partition = _PARTITIONS.get().get(args[0]) if args and isinstance(args[0], str) else None
        if partition is None:
            return None
        return (partition, args, tuple(sorted(kwargs.items())))


def text_memo(maxsize: int) -> Callable[[Callable[P, R]], TextMemo[P, R]]:
    """Decorator: :class:`TextMemo` of the decorated function."""

    def decorate(function: Callable[P, R]) -> TextMemo[P, R]:
        return TextMemo(function, maxsize)

    return decorate
