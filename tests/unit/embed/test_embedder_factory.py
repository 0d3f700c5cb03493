from __future__ import annotations

import pytest

from graphctx.embed import (
    OpenAICompatibleEmbedder,
    SentenceTransformersEmbedder,
    UniversalSentenceEncoderEmbedder,
    embedder_from_spec,
)
from graphctx.errors import ConfigurationError


def test_the_default_spec_is_the_offline_universal_sentence_encoder() -> None:
    assert isinstance(embedder_from_spec(), UniversalSentenceEncoderEmbedder)
    assert isinstance(embedder_from_spec(" use "), UniversalSentenceEncoderEmbedder)


def test_st_spec_names_a_sentence_transformers_model_without_loading_it() -> None:
    embedder = embedder_from_spec("st:/models/paraphrase-multilingual")
    assert isinstance(embedder, SentenceTransformersEmbedder)
    assert embedder.name == "st:/models/paraphrase-multilingual"


def test_openai_spec_takes_url_and_model_and_the_key_from_the_environment() -> None:
    embedder = embedder_from_spec(
        "openai:http://127.0.0.1:8080/v1#bge-m3",
        environ={"GRAPHCTX_EMBED_API_KEY": "sk-secret"},
    )
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.name == "openai:bge-m3"
    assert "sk-secret" not in repr(embedder)


@pytest.mark.parametrize(
    "spec",
    ["", "hashing", "st:", "openai:", "openai:http://host/v1", "openai:#model", "openai:host#m"],
)
def test_an_unknown_or_incomplete_spec_is_a_configuration_error(spec: str) -> None:
    with pytest.raises(ConfigurationError):
        embedder_from_spec(spec, environ={})
