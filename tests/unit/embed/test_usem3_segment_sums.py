from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.embed.usem3_forward import segment_sums


def _reduceat(rows: np.ndarray, lens: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lengths = np.array(lens, dtype=np.int64)
    starts = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return np.add.reduceat(rows, starts, axis=0), starts, lengths


def test_every_segment_length_sums_to_the_bits_of_numpys_reduceat() -> None:
    rng = np.random.default_rng(17)
    lens = [*range(1, 300), 511, 1024, 2049]  # every branch of the pairwise order
    scale = rng.choice(np.array([1e-3, 1.0, 1e3], dtype=np.float32), size=(sum(lens), 1))
    rows = rng.standard_normal((sum(lens), 24)).astype(np.float32) * scale
    expected, starts, lengths = _reduceat(rows, lens)
    got = segment_sums(rows, starts, lengths)
    assert got.dtype == np.float32
    assert got.tobytes() == expected.tobytes()


def test_signed_zeros_keep_their_sign() -> None:
    rows = np.full((20, 3), -0.0, dtype=np.float32)
    expected, starts, lengths = _reduceat(rows, [1, 3, 7, 9])
    assert segment_sums(rows, starts, lengths).tobytes() == expected.tobytes()


@settings(max_examples=60, deadline=None)
@given(
    lens=st.lists(st.integers(1, 200), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_tiling_sums_to_the_bits_of_numpys_reduceat(lens: list[int], seed: int) -> None:
    rows = np.random.default_rng(seed).standard_normal((sum(lens), 8)).astype(np.float32)
    expected, starts, lengths = _reduceat(rows, lens)
    assert segment_sums(rows, starts, lengths).tobytes() == expected.tobytes()
