"""The ``Embedder`` port: text in, L2-normalised float32 vectors out.

Every adapter returns rows of unit length, so the store can score cosine similarity with a
plain dot product. The port is synchronous; callers that must not block run it in a thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from graphctx.errors import EmbeddingError

__all__ = [
    "DocumentsEmbedder",
    "Embedder",
    "Float32Array",
    "LocalModel",
    "embed_each",
    "load_model",
    "normalize_rows",
    "prepare_texts",
]

Float32Array = npt.NDArray[np.float32]
"""A float32 array: ``(n, dimension)`` for documents, ``(dimension,)`` for a query."""


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors of a fixed dimension.

    Deliberately not ``runtime_checkable``: on Python 3.11 ``isinstance`` would read
    ``dimension``, which may load a model or call an endpoint (see the adapters).
    """

    @property
    def name(self) -> str:
        """Stable model identifier, e.g. ``"use-multilingual-v3"``; vectors from embedders
        with different names must never be compared."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Float32Array:
        """Embed passages: shape ``(len(texts), dimension)``, rows L2-normalised."""
        ...

    def embed_query(self, text: str) -> Float32Array:
        """Embed one search query: shape ``(dimension,)``, L2-normalised."""
        ...


@runtime_checkable
class LocalModel(Protocol):
    """An embedder whose model loads in-process on first use (USE, e5, sentence-transformers).

    ``open()`` loads it now, once, thread-safe. Remote embedders have nothing to load."""

    def open(self) -> None: ...


@runtime_checkable
class DocumentsEmbedder(Protocol):
    """An embedder that embeds many documents at once and still gives each document's texts
    exactly the vectors (every bit) its own ``embed_documents`` call would."""

    def embed_each(self, documents: Sequence[Sequence[str]]) -> list[Float32Array]: ...


def embed_each(embedder: Embedder, documents: Sequence[Sequence[str]]) -> list[Float32Array]:
    """Each document's vectors, bitwise as ``embedder.embed_documents(document)`` returns
    them: in shared calls when the embedder can keep those bits, else one call per document.
    A document's vectors thus never depend on the documents embedded beside it."""
    if isinstance(embedder, DocumentsEmbedder):
        return embedder.embed_each(documents)
    return [embedder.embed_documents(texts) for texts in documents]


def load_model(embedder: Embedder) -> None:
    """Load an in-process embedder's model now, so the load is not charged to the first
    request's deadline (a cold ``graphctx search``). A no-op for remote embedders."""
    if isinstance(embedder, LocalModel):  # checks for ``open`` only, never ``dimension``
        embedder.open()


def normalize_rows(vectors: npt.ArrayLike) -> Float32Array:
    """Return a float32 copy of a 2-D array with every row scaled to unit L2 norm.

    All-zero rows stay zero (they score 0 against everything). Raises ``EmbeddingError`` for
    anything that is not a finite 2-D array, so a broken model never reaches the store.
    """
    try:
        matrix = np.array(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"embedding is not a numeric array: {exc}") from exc
    if matrix.ndim != 2:
        raise EmbeddingError(f"expected a 2-D array of vectors, got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise EmbeddingError("embedding contains NaN or infinite values")
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0, casting="unsafe")
    return matrix


def prepare_texts(texts: Sequence[str]) -> list[str]:
    """Copy ``texts`` into a list of UTF-8-encodable strings for an adapter.

    Rejects a bare ``str`` (a common slip that would embed each character separately) and
    non-string items. Lone surrogates (from ``surrogateescape``-decoded bytes) become ``?``
    instead of failing the whole batch inside the model or the JSON encoder.
    """
    if isinstance(texts, str):
        raise TypeError("embed_documents() takes a sequence of strings, not a single str")
    prepared = list(texts)
    for position, text in enumerate(prepared):
        if not isinstance(text, str):
            raise TypeError(f"texts[{position}] is {type(text).__name__}, expected str")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            prepared[position] = text.encode("utf-8", "replace").decode("utf-8")
    return prepared
