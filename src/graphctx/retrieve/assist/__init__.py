"""The optional LLM stages of retrieval (seed 001, seed 004), all off by default.

``config``: which stages run and with which chat client; ``cache``: the bounded response
cache; ``ask``: one cached, deadline-bounded, parsed model call; ``prompts``: what the model
is shown and how its reply is read; ``merge``: fusing rewrites in and applying an order
(pure); ``llm_stages``: the stages as the provider runs them.
"""

from graphctx.retrieve.assist.cache import ResponseCache
from graphctx.retrieve.assist.config import LlmStagesConfig
from graphctx.retrieve.assist.llm_stages import LlmStages

__all__ = ["LlmStages", "LlmStagesConfig", "ResponseCache"]
