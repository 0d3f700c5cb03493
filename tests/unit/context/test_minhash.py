"""MinHash signatures and similarities equal their definition, computed the slow way."""

from __future__ import annotations

import re
import sys
import zlib

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context import dedup, minhash
from graphctx.context.minhash import (
    HEAD_PERMUTATIONS,
    MINHASH_PERMUTATIONS,
    LazySignature,
    MinHashSignature,
    minhash_signature,
    shingle_hashes,
    shingles,
)
from graphctx.context.text_memo import text_memo_partitions

texts = st.text(alphabet=st.sampled_from("abc de\n가나다 XYZ.,"), min_size=0, max_size=120)
# Characters of 1 to 4 UTF-8 bytes, ones NFKC or case folding change (ligature, full-width,
# sharp s, Hangul jamo), and whitespace other than ASCII: shingles of mixed byte lengths.
WIDE = "ab Z.\n\t가나\u3000\u2028\x1c\u00a0é\u0301ﬁ\uff21ß\u1100\u1161\U0001f600\U00020000<["
wide_texts = st.text(alphabet=st.sampled_from(WIDE), min_size=0, max_size=80) | st.text(max_size=40)


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


@given(text=wide_texts, size=st.integers(min_value=1, max_value=9))
def test_signatures_of_any_text_equal_their_definition(text: str, size: int) -> None:
    assert minhash_signature(text, size).values == defined_signature(text, size)


@given(text=wide_texts, size=st.integers(min_value=1, max_value=9))
def test_the_bytewise_crc_is_the_crc_of_each_shingle(text: str, size: int) -> None:
    hashes = shingle_hashes(text, size).tolist()
    assert set(hashes) == {zlib.crc32(s.encode("utf-8")) for s in shingles(text, size)}
    assert len(hashes) == max(1, len(minhash._normalise(text)) - size + 1)  # one per position


def edited(text: str, edits: list[tuple[int, str]]) -> str:
    for at, piece in edits:
        cut = at % (len(text) + 1)
        text = text[:cut] + piece + text[cut + 1 :]
    return text


@given(
    first=wide_texts,
    edits=st.lists(
        st.tuples(st.integers(0, 200), st.sampled_from(["", "x", "가", " "])), max_size=6
    ),
    other=wide_texts,
    threshold=st.sampled_from([0.05, 0.25, 0.5, 0.75, 0.8, 0.9, 1.0]),
)
def test_the_lazy_comparison_decides_as_the_whole_signatures_do(
    first: str, edits: list[tuple[int, str]], other: str, threshold: float
) -> None:
    # a lightly edited copy (similar), and an unrelated text
    for second in (edited(first, edits), other):
        mine, theirs = LazySignature(first), LazySignature(second)
        expected = minhash_signature(second).similarity(minhash_signature(first)) >= threshold
        assert mine.reaches(theirs, threshold) is expected
        counted = int(mine.holds(theirs.head_argmins).sum())  # as the packer counts, many at once
        assert mine.reaches(theirs, threshold, counted) is expected
        assert mine.signature() == minhash_signature(first)


def test_whitespace_is_what_the_regular_expression_called_whitespace() -> None:
    """Normalising splits on str.isspace; the replaced code matched r"\\s": the same set."""
    space = re.compile(r"\s")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (space.fullmatch(char) is not None) == char.isspace(), hex(code)


def test_a_comparison_stops_computing_minima_once_they_decide_it() -> None:
    rule = "The employer must give at least thirty days notice before a dismissal."
    backups = "Backups run nightly at three and are kept for thirty days for audits."
    cache = "Is the cache warm? Check the hit ratio first, then restart the gateway."
    # unrelated: the packed block's head minima alone rule the candidate out
    mine, theirs = LazySignature(backups), LazySignature(rule)
    assert not mine.reaches(theirs, 0.8)
    assert (mine.computed, theirs.computed) == (0, HEAD_PERMUTATIONS)
    # half shared: the bound needs more of the packed block's minima, none of the candidate's
    mine, theirs = LazySignature(rule + " " + backups), LazySignature(rule + " " + cache)
    assert not mine.reaches(theirs, 0.8)
    assert mine.computed == 0
    assert HEAD_PERMUTATIONS < theirs.computed <= MINHASH_PERMUTATIONS
    # the packed block is within the candidate: minima compared one by one decide it, the
    # candidate's over the residues the packed block lacks, never the candidate's own minima
    mine, theirs = LazySignature(rule + " " + backups + " " + cache), LazySignature(rule)
    assert not mine.reaches(theirs, 0.8)
    assert mine.computed == 0
    assert mine.reaches(theirs, 0.05)
    assert mine.computed == 0
    for signature, text in ((mine, rule + " " + backups + " " + cache), (theirs, rule)):
        assert signature.signature() == minhash_signature(text)
    assert mine.computed == MINHASH_PERMUTATIONS


@given(first=wide_texts, second=wide_texts)
def test_minima_agree_only_where_one_is_reached_at_a_residue_of_the_other(
    first: str, second: str
) -> None:
    mine, theirs = LazySignature(first), LazySignature(second)
    agreeing = np.array(mine.signature().values) == np.array(theirs.signature().values)
    assert not (agreeing & ~mine.holds(theirs._argmins)).any()
    assert mine.holds(minhash.shingle_residues(first)).all()


@given(text=wide_texts, size=st.integers(min_value=1, max_value=9))
def test_the_residues_are_the_distinct_shingle_hashes_mod_p(text: str, size: int) -> None:
    prime = int(minhash._PRIME)
    expected = sorted({zlib.crc32(s.encode("utf-8")) % prime for s in shingles(text, size)})
    assert minhash.shingle_residues(text, size).tolist() == expected


def test_a_text_is_hashed_once_a_partition_and_a_prefix_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed: list[str] = []
    real = minhash.shingle_hashes

    def counting(text: str, size: int) -> npt.NDArray[np.uint64]:
        hashed.append(text)
        return real(text, size)

    monkeypatch.setattr(minhash, "shingle_hashes", counting)
    text = "The employer must give at least thirty days notice before a dismissal."
    with text_memo_partitions({text: ("ns", frozenset({"s"}))}):
        signature = LazySignature(text)
        assert signature.signature() == MinHashSignature(defined_signature(text, 5))
        assert LazySignature(text).head.tolist() == signature.head.tolist()
        assert len(hashed) == 1  # the residues memoised in the text's partition
        LazySignature(text[:40])
        LazySignature(text[:40])
        assert len(hashed) == 3  # a prefix has no partition: not memoised


def residue_reaching(row: int, value: int) -> int:
    """The residue that permutation ``row`` maps to ``value``."""
    prime = int(minhash._PRIME)
    a, b = int(minhash._A[row]), int(minhash._B[row])
    return (value - b) * pow(a, -1, prime) % prime


@settings(max_examples=200, deadline=None)
@given(
    plain=st.lists(st.integers(0, int(minhash._PRIME) - 1), min_size=1, max_size=300),
    edges=st.lists(
        st.tuples(
            st.integers(0, MINHASH_PERMUTATIONS - 1),
            st.sampled_from([0, 1, 2, 3, 5_000, 5_001, -1, -2, -3]),
        ),
        max_size=12,
    ),
    start=st.sampled_from([0, 32, 96, 127]),
)
def test_the_fixed_point_search_finds_each_exact_least_permuted_residue(
    plain: list[int], edges: list[tuple[int, int]], start: int
) -> None:
    """Residues permuted to 0 (whose fixed-point fraction wraps round), 1 or p - 1, and
    pairs a unit apart, are found as the integers order them."""
    prime = int(minhash._PRIME)
    chosen = set(plain) | {residue_reaching(row, value % prime) for row, value in edges}
    residues = np.array(sorted(chosen), dtype=np.uint32)
    found = minhash._argmins(residues, start, MINHASH_PERMUTATIONS).tolist()
    expected = [
        min(range(len(residues)), key=lambda j: (int(a) * int(residues[j]) + int(b)) % prime)
        for a, b in zip(minhash._A[start:], minhash._B[start:], strict=True)
    ]
    assert found == expected


@settings(max_examples=200, deadline=None)
@given(
    plain=st.lists(st.integers(0, int(minhash._PRIME) - 1), min_size=1, max_size=300),
    minima=st.lists(
        st.integers(0, int(minhash._PRIME) - 1) | st.sampled_from([0, 1, 2]),
        min_size=MINHASH_PERMUTATIONS,
        max_size=MINHASH_PERMUTATIONS,
    ),
    edges=st.lists(
        st.tuples(st.integers(0, MINHASH_PERMUTATIONS - 1), st.sampled_from([-1, 0, 1, 2])),
        max_size=12,
    ),
    zeros=st.lists(st.integers(0, MINHASH_PERMUTATIONS - 1), max_size=3),
    rows=st.sets(st.integers(0, MINHASH_PERMUTATIONS - 1), min_size=1, max_size=32),
)
def test_residues_above_a_minimum_are_counted_exactly(
    plain: list[int],
    minima: list[int],
    edges: list[tuple[int, int]],
    zeros: list[int],
    rows: set[int],
) -> None:
    """Residues permuted to a unit below, at or above a row's minimum, and to 0 (which the
    fixed-point fraction wraps round), are counted as the integers say."""
    prime = int(minhash._PRIME)
    chosen = set(plain)
    chosen |= {residue_reaching(row, (minima[row] + shift) % prime) for row, shift in edges}
    chosen |= {residue_reaching(row, 0) for row in zeros}
    residues = np.array(sorted(chosen), dtype=np.uint32)
    ordered = np.array(sorted(rows), dtype=np.intp)
    found = minhash._below(residues, ordered, np.array(minima, dtype=np.uint64))
    a, b = minhash._A, minhash._B
    expected = sum(
        all((int(a[i]) * int(r) + int(b[i])) % prime > minima[i] for r in residues.tolist())
        for i in ordered.tolist()
    )
    assert found == expected


@given(threshold=st.floats(min_value=0.0, max_value=1.0) | st.sampled_from([0.75, 0.8, 1.0]))
def test_the_packer_opens_exactly_the_pairs_the_head_bound_leaves_open(threshold: float) -> None:
    needed = dedup._head_needed(threshold)
    for bound in range(HEAD_PERMUTATIONS + 1):
        assert (bound >= needed) is minhash.may_reach(bound, HEAD_PERMUTATIONS, threshold)
