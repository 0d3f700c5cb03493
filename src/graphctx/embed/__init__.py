"""Embedders: the ``Embedder`` port, the offline default and optional adapters.

Entry points pick one with ``embedder_from_spec``; everything else depends only on the port.
"""

from graphctx.embed.e5 import E5Embedder
from graphctx.embed.factory import API_KEY_ENV_VAR, DEFAULT_EMBEDDER_SPEC, embedder_from_spec
from graphctx.embed.openai_compatible import OpenAICompatibleEmbedder
from graphctx.embed.port import Embedder, Float32Array, normalize_rows
from graphctx.embed.sentence_transformers import SentenceTransformersEmbedder
from graphctx.embed.universal_sentence_encoder import UniversalSentenceEncoderEmbedder

__all__ = [
    "API_KEY_ENV_VAR",
    "DEFAULT_EMBEDDER_SPEC",
    "E5Embedder",
    "Embedder",
    "Float32Array",
    "OpenAICompatibleEmbedder",
    "SentenceTransformersEmbedder",
    "UniversalSentenceEncoderEmbedder",
    "embedder_from_spec",
    "normalize_rows",
]
