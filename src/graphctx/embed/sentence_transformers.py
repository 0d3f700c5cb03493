"""Optional embedder: any sentence-transformers model, from a local folder or a hub name.

Needs the ``sentence-transformers`` extra (torch, about 1.4 GB): ``pip install
'graphctx[sentence-transformers]'``. Nothing is imported or loaded until ``open()`` or the
first use. A hub name downloads the model on first load unless it is cached; point
``model_name_or_path`` at a local folder (and set ``HF_HUB_OFFLINE=1``) to stay offline.
Models trained with instructions (e5, bge, nomic) need ``query_prefix`` / ``document_prefix``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from graphctx.embed.port import Float32Array, normalize_rows, prepare_texts
from graphctx.errors import ConfigurationError, EmbeddingError, MissingExtraError

__all__ = ["SentenceTransformersEmbedder"]

DEFAULT_BATCH_SIZE = 32


class _SentenceTransformer(Protocol):
    def encode(
        self,
        sentences: list[str],
        *,
        batch_size: int,
        show_progress_bar: bool,
        convert_to_numpy: bool,
        normalize_embeddings: bool,
    ) -> npt.ArrayLike: ...


class SentenceTransformersEmbedder:
    """An ``Embedder`` over ``sentence_transformers.SentenceTransformer``. Construction is
    free; ``open()`` (or the first embed, or reading ``dimension``) loads the model once."""

    def __init__(
        self,
        model_name_or_path: str,
        *,
        device: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        query_prefix: str = "",
        document_prefix: str = "",
        name: str | None = None,
    ) -> None:
        if not model_name_or_path.strip():
            raise ConfigurationError("sentence-transformers model name or path is empty")
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, got {batch_size}")
        self._model_name_or_path = model_name_or_path
        self._device = device
        self._batch_size = batch_size
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._name = name or f"st:{model_name_or_path}"
        self._loaded_model: tuple[_SentenceTransformer, int] | None = None
        self._load_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._model_name_or_path!r}, device={self._device!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._loaded()[1]

    def open(self) -> None:
        """Import sentence-transformers and load the model, once (thread-safe)."""
        self._loaded()

    def embed_documents(self, texts: Sequence[str]) -> Float32Array:
        prepared = [self._document_prefix + text for text in prepare_texts(texts)]
        return self._encode(prepared)

    def embed_query(self, text: str) -> Float32Array:
        (query,) = prepare_texts([text])
        vector: Float32Array = self._encode([self._query_prefix + query])[0]
        return vector

    def _encode(self, texts: list[str]) -> Float32Array:
        model, dimension = self._loaded()
        if not texts:
            return np.empty((0, dimension), dtype=np.float32)
        try:
            raw = model.encode(
                texts,
                batch_size=self._batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
        except Exception as exc:
            raise EmbeddingError(f"{self._name} failed to embed: {exc!r}") from exc
        vectors = normalize_rows(raw)
        if vectors.shape != (len(texts), dimension):
            raise EmbeddingError(
                f"{self._name} returned shape {vectors.shape}, expected {(len(texts), dimension)}"
            )
        return vectors

    def _loaded(self) -> tuple[_SentenceTransformer, int]:
        loaded = self._loaded_model
        if loaded is not None:
            return loaded
        with self._load_lock:
            if self._loaded_model is None:
                self._loaded_model = self._load()
            return self._loaded_model

    def _load(self) -> tuple[_SentenceTransformer, int]:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtraError(
                "sentence-transformers", f"embedder {self._name!r}", "sentence-transformers"
            ) from exc
        try:
            model = SentenceTransformer(self._model_name_or_path, device=self._device)
            dimension = model.get_sentence_embedding_dimension()
        except Exception as exc:
            raise ConfigurationError(
                f"could not load sentence-transformers model {self._model_name_or_path!r}: {exc!r}"
            ) from exc
        if not isinstance(dimension, int) or dimension < 1:
            raise ConfigurationError(
                f"sentence-transformers model {self._model_name_or_path!r} "
                f"reports no fixed embedding dimension ({dimension!r})"
            )
        return model, dimension
