from __future__ import annotations

import sys
import types
from typing import ClassVar

import numpy as np
import pytest

from graphctx.embed import SentenceTransformersEmbedder
from graphctx.errors import ConfigurationError


class _FakeSentenceTransformer:
    """Stands in for ``sentence_transformers.SentenceTransformer`` (no torch needed)."""

    loaded: ClassVar[list[tuple[str, str | None]]] = []
    calls: ClassVar[list[list[str]]] = []

    def __init__(self, model_name_or_path: str, device: str | None = None) -> None:
        _FakeSentenceTransformer.loaded.append((model_name_or_path, device))

    def get_sentence_embedding_dimension(self) -> int:
        return 2

    def encode(
        self,
        sentences: list[str],
        *,
        batch_size: int,
        show_progress_bar: bool,
        convert_to_numpy: bool,
        normalize_embeddings: bool,
    ) -> np.ndarray:
        _FakeSentenceTransformer.calls.append(sentences)
        return np.array([[float(len(s)), 1.0] for s in sentences])


@pytest.fixture
def fake_package(monkeypatch: pytest.MonkeyPatch) -> type[_FakeSentenceTransformer]:
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = _FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    monkeypatch.setattr(_FakeSentenceTransformer, "loaded", [])
    monkeypatch.setattr(_FakeSentenceTransformer, "calls", [])
    return _FakeSentenceTransformer


def test_a_missing_package_is_a_configuration_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import now fails
    embedder = SentenceTransformersEmbedder("/models/minilm")
    with pytest.raises(ConfigurationError, match=r"install graphctx\[sentence-transformers\]"):
        embedder.embed_query("q")


def test_construction_imports_and_loads_nothing(
    fake_package: type[_FakeSentenceTransformer],
) -> None:
    SentenceTransformersEmbedder("/models/minilm")
    assert fake_package.loaded == []


def test_documents_and_queries_get_their_prefixes_and_unit_rows(
    fake_package: type[_FakeSentenceTransformer],
) -> None:
    embedder = SentenceTransformersEmbedder(
        "/models/e5", device="cpu", query_prefix="query: ", document_prefix="passage: "
    )
    documents = embedder.embed_documents(["a", "bb"])
    query = embedder.embed_query("q")
    assert (documents.shape, documents.dtype.name, query.shape, embedder.dimension) == (
        (2, 2),
        "float32",
        (2,),
        2,
    )
    np.testing.assert_allclose(np.linalg.norm(documents, axis=1), 1.0, rtol=1e-6)
    assert fake_package.calls == [["passage: a", "passage: bb"], ["query: q"]]
    assert fake_package.loaded == [("/models/e5", "cpu")]


def test_empty_input_returns_zero_rows_of_the_model_dimension(
    fake_package: type[_FakeSentenceTransformer],
) -> None:
    vectors = SentenceTransformersEmbedder("/models/minilm").embed_documents([])
    assert (vectors.shape, fake_package.calls) == ((0, 2), [])


def test_an_empty_model_name_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        SentenceTransformersEmbedder("  ")
