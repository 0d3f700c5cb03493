"""A bounded response cache for the optional LLM stages, one per provider.

Keyed by (model, prompt version, sha256 of the rendered messages): a repeated question with
the same visible inputs is answered from memory and pays no second HTTP call. The rendered
messages are the whole input, so two principals share an entry only when the model would
have been shown exactly the same text. Least recently used entries go first once ``size``
entries are held. Thread-safe: stage calls run in worker threads.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from graphctx.llm.port import ChatMessage, ChatReply

__all__ = ["DEFAULT_CACHE_SIZE", "CacheKey", "ResponseCache", "cache_key"]

DEFAULT_CACHE_SIZE = 1024  # entries


@dataclass(frozen=True)
class CacheKey:
    model: str
    prompt_version: str
    input_sha256: str


def cache_key(model: str, prompt_version: str, messages: Sequence[ChatMessage]) -> CacheKey:
    rendered = json.dumps([m.as_dict() for m in messages], ensure_ascii=False, sort_keys=True)
    digest = hashlib.sha256(rendered.encode("utf-8")).hexdigest()
    return CacheKey(model, prompt_version, digest)


class ResponseCache:
    """At most ``size`` replies, least recently used evicted first; ``size=0`` keeps none."""

    def __init__(self, size: int = DEFAULT_CACHE_SIZE) -> None:
        if size < 0:
            raise ValueError("cache size must be >= 0")
        self.size = size
        self._entries: OrderedDict[CacheKey, ChatReply] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, key: CacheKey) -> ChatReply | None:
        with self._lock:
            reply = self._entries.get(key)
            if reply is not None:
                self._entries.move_to_end(key)
            return reply

    def put(self, key: CacheKey, reply: ChatReply) -> None:
        if self.size == 0:
            return
        with self._lock:
            self._entries[key] = reply
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
