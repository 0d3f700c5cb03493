"""Settings of the optional LLM stages: which run, through which chat client, with what time.

All three are off by default. They share one chat client (an
:class:`~graphctx.llm.chat.OpenAICompatibleChat` gives them the transport, timeouts, retries
and size cap concept extraction uses) and one response cache per provider. Each stage may use
its share of what is left of the request deadline.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphctx.errors import ConfigurationError
from graphctx.llm.port import ModelChat
from graphctx.retrieve.assist.cache import DEFAULT_CACHE_SIZE

__all__ = ["DEFAULT_RERANK_TOP_N", "LlmStagesConfig"]

DEFAULT_MAX_REWRITES = 3
DEFAULT_RERANK_TOP_N = 10
REWRITE_SHARE = 0.2  # of the remaining request time
ROUTE_SHARE = 0.15
RERANK_SHARE = 0.3


@dataclass(frozen=True)
class LlmStagesConfig:
    """``rewrite``: the model proposes rewritten queries (the original always runs);
    ``route``: an LLM router picks the retrievers in ``auto`` mode before ontology
    augmentation; ``rerank``: the model reorders the top ``rerank_top_n`` visible candidates
    of a multi-issue question."""

    chat: ModelChat
    rewrite: bool = False
    route: bool = False
    rerank: bool = False
    max_rewrites: int = DEFAULT_MAX_REWRITES
    rerank_top_n: int = DEFAULT_RERANK_TOP_N
    cache_size: int = DEFAULT_CACHE_SIZE
    rewrite_share: float = REWRITE_SHARE
    route_share: float = ROUTE_SHARE
    rerank_share: float = RERANK_SHARE

    def __post_init__(self) -> None:
        if self.max_rewrites < 1 or self.rerank_top_n < 2 or self.cache_size < 0:
            raise ConfigurationError(
                "llm stages: max_rewrites >= 1, rerank_top_n >= 2 and cache_size >= 0"
            )
        for share in (self.rewrite_share, self.route_share, self.rerank_share):
            if not 0.0 < share < 1.0:
                raise ConfigurationError("llm stages: each deadline share is in (0, 1)")
