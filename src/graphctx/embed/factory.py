"""Choose an embedder from a one-line spec (CLI flag, config value, environment variable).

::

    use                              offline default (USE-multilingual v3, 512-d)
    e5                               multilingual-e5-small, 4-bit, offline, 384-d; stronger and
                                     20-30x slower than use (extra graphctx[e5])
    st:<model path or name>          sentence-transformers (extra graphctx[sentence-transformers])
    openai:<base_url>#<model>        any OpenAI-compatible /embeddings endpoint; API key from
                                     the GRAPHCTX_EMBED_API_KEY environment variable

Building an embedder does no I/O; models load and endpoints are contacted on first use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from graphctx.embed.e5 import E5Embedder
from graphctx.embed.openai_compatible import OpenAICompatibleEmbedder
from graphctx.embed.port import Embedder
from graphctx.embed.sentence_transformers import SentenceTransformersEmbedder
from graphctx.embed.universal_sentence_encoder import UniversalSentenceEncoderEmbedder
from graphctx.errors import ConfigurationError

__all__ = ["API_KEY_ENV_VAR", "DEFAULT_EMBEDDER_SPEC", "embedder_from_spec"]

DEFAULT_EMBEDDER_SPEC = "use"
API_KEY_ENV_VAR = "GRAPHCTX_EMBED_API_KEY"


def embedder_from_spec(
    spec: str = DEFAULT_EMBEDDER_SPEC, *, environ: Mapping[str, str] | None = None
) -> Embedder:
    """Build the embedder a spec names; an unknown or incomplete spec is a
    ``ConfigurationError``. ``environ`` defaults to ``os.environ``."""
    spec = spec.strip()
    kind, _, target = spec.partition(":")
    target = target.strip()
    if spec == "use":
        return UniversalSentenceEncoderEmbedder()
    if spec == "e5":
        return E5Embedder()
    if kind == "st" and target:
        return SentenceTransformersEmbedder(target)
    if kind == "openai":
        base_url, _, model = target.partition("#")
        if not base_url.strip() or not model.strip():
            raise ConfigurationError(
                f"embedder spec {spec!r} must look like openai:<base_url>#<model>"
            )
        env = os.environ if environ is None else environ
        api_key = env.get(API_KEY_ENV_VAR) or None
        return OpenAICompatibleEmbedder(base_url.strip(), model.strip(), api_key=api_key)
    raise ConfigurationError(
        f"unknown embedder spec {spec!r}; use 'use', 'e5', 'st:<model>'"
        " or 'openai:<base_url>#<model>'"
    )
