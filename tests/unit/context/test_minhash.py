"""MinHash signatures and similarities equal their definition, computed the slow way."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphctx.context import minhash
from graphctx.context.minhash import MinHashSignature, minhash_signature, shingles

texts = st.text(alphabet=st.sampled_from("abc de\n가나다 XYZ.,"), min_size=0, max_size=120)


def defined_signature(text: str, size: int) -> tuple[int, ...]:
    """min over the shingles of (a * crc32 + b) mod p, per permutation, in Python integers."""
    hashes = [zlib.crc32(s.encode("utf-8")) for s in shingles(text, size)]
    prime = int(minhash._PRIME)
    return tuple(
        min((int(a) * h + int(b)) % prime for h in hashes)
        for a, b in zip(minhash._A, minhash._B, strict=True)
    )


@given(text=texts, size=st.integers(min_value=1, max_value=7))
def test_a_signature_is_the_minimum_of_each_permuted_shingle_hash(text: str, size: int) -> None:
    assert minhash_signature(text, size).values == defined_signature(text, size)


@given(first=texts, second=texts)
def test_similarity_is_the_share_of_equal_minima(first: str, second: str) -> None:
    mine, theirs = minhash_signature(first), minhash_signature(second)
    equal = [m == t for m, t in zip(mine.values, theirs.values, strict=True)]
    assert mine.similarity(theirs) == sum(equal) / len(equal)


def test_signatures_of_different_lengths_are_not_compared() -> None:
    with pytest.raises(ValueError, match="different lengths"):
        MinHashSignature((1, 2)).similarity(MinHashSignature((1,)))
