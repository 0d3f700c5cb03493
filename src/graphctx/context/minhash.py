"""MinHash over character shingles: near-duplicate detection that works for Korean too.

Character shingles need no word segmentation, so Korean (no reliable spaces, agglutinated
particles) and English are handled the same way. Text is NFKC-normalised, case-folded and its
whitespace collapsed first. Signatures are deterministic across runs and machines (CRC-32
shingle hashes, hash-family coefficients fixed by blake2b).
"""

from __future__ import annotations

import hashlib
import operator
import unicodedata
import zlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphctx.context.text_memo import text_memo

__all__ = [
    "HEAD_PERMUTATIONS",
    "MINHASH_PERMUTATIONS",
    "STEP_PERMUTATIONS",
    "LazySignature",
    "MinHashSignature",
    "minhash_signature",
    "shingle_hashes",
    "shingles",
    "signature_head",
]

MINHASH_PERMUTATIONS = 128
HEAD_PERMUTATIONS = 32  # computed for every text; enough to rule out most pairs
STEP_PERMUTATIONS = 32  # then compared this many at a time, while the result is open
SIGNATURE_CACHE_ENTRIES = 8_192  # chunk texts recur across requests; signature heads are pure
_PRIME = np.uint64(4_294_967_291)  # largest prime below 2**32: a*x + b stays below 2**64


def _coefficients() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    seed = hashlib.blake2b(b"graphctx-minhash-v1", digest_size=64).digest()
    values: list[int] = []
    counter = 0
    while len(values) < 2 * MINHASH_PERMUTATIONS:
        block = hashlib.blake2b(seed + counter.to_bytes(4, "big"), digest_size=64).digest()
        values.extend(int.from_bytes(block[i : i + 4], "big") for i in range(0, 64, 4))
        counter += 1
    prime = int(_PRIME)
    a = np.array([1 + v % (prime - 1) for v in values[:MINHASH_PERMUTATIONS]], dtype=np.uint64)
    b = np.array([v % prime for v in values[MINHASH_PERMUTATIONS:]], dtype=np.uint64)
    return a, b


_A, _B = _coefficients()


def _normalise(text: str) -> str:
    # str.split() splits on exactly the characters r"\s" matches (tests/unit/context/test_minhash)
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def shingles(text: str, size: int) -> frozenset[str]:
    """Overlapping character ``size``-grams of the normalised text (the whole text if shorter)."""
    normal = _normalise(text)
    if len(normal) <= size:
        return frozenset({normal})
    return frozenset(normal[i : i + size] for i in range(len(normal) - size + 1))


@dataclass(frozen=True)
class MinHashSignature:
    values: tuple[int, ...]

    def similarity(self, other: MinHashSignature) -> float:
        """Estimated Jaccard similarity of the two shingle sets."""
        if len(self.values) != len(other.values):
            raise ValueError("signatures of different lengths")
        # The packer compares every candidate with every packed block: count in C, not in a
        # Python loop (5x faster; the same count).
        same: int = sum(map(operator.eq, self.values, other.values))
        return same / len(self.values)


def minhash_signature(text: str, shingle_size: int = 5) -> MinHashSignature:
    return LazySignature(text, shingle_size).signature()


class LazySignature:
    """The signature of one text, its first ``HEAD_PERMUTATIONS`` minima computed at once and
    the rest only as far as a comparison needs them.

    Most candidates the packer compares share few shingles with anything packed: the head alone
    shows that the similarity cannot reach the threshold, whatever the other minima are, and
    the other three quarters of the permutations (most of a signature's cost) are never run.
    When the head leaves it open, the rest is compared ``STEP_PERMUTATIONS`` at a time, and
    the comparison stops as soon as the minima compared so far decide it either way (two
    texts that share a passage but not the rest are told apart in one more step, not three).

    Only the head is memoised (:func:`signature_head`, in the text's partition). Whether the
    rest was needed depends on what the text was compared with, which may be a chunk another
    caller cannot see; so the rest lives in this object, which lives for one packing call.
    """

    __slots__ = ("_computed", "_hashes", "_size", "_text", "_values")

    def __init__(self, text: str, shingle_size: int = 5) -> None:
        self._text = text
        self._size = shingle_size
        self._values = np.empty(MINHASH_PERMUTATIONS, dtype=np.uint64)
        self._computed = HEAD_PERMUTATIONS  # minima known so far, a prefix of the signature
        self._hashes: npt.NDArray[np.uint64] | None = None
        head = signature_head.lookup(text, shingle_size)
        if head is None:  # computed here, as signature_head would, keeping the hashes
            self._hashes = shingle_hashes(text, shingle_size)
            head = _head_of(self._hashes)
            signature_head.remember(head, text, shingle_size)
        self._values[:HEAD_PERMUTATIONS] = head

    @property
    def head(self) -> npt.NDArray[np.uint64]:
        """The first ``HEAD_PERMUTATIONS`` minima."""
        return self._values[:HEAD_PERMUTATIONS]

    @property
    def computed(self) -> int:
        """How many of the ``MINHASH_PERMUTATIONS`` minima have been computed."""
        return self._computed

    def signature(self) -> MinHashSignature:
        """The whole signature (the same as :func:`minhash_signature`)."""
        return MinHashSignature(tuple(self._minima_to(MINHASH_PERMUTATIONS).tolist()))

    def _minima_to(self, end: int) -> npt.NDArray[np.uint64]:
        """The first ``end`` minima, computing those not known yet."""
        if end > self._computed:
            if self._hashes is None:
                self._hashes = shingle_hashes(self._text, self._size)
            start = self._computed
            self._values[start:end] = _minima(self._hashes, _A[start:end], _B[start:end])
            self._computed = end
        return self._values[:end]

    def reaches(self, other: LazySignature, threshold: float, same_head: int | None = None) -> bool:
        """``other.signature().similarity(self.signature()) >= threshold``, computing the rest
        of either signature only as far as the minima compared so far leave it open.
        ``same_head``: how many minima the heads share, when the caller counted them (for
        many others at once)."""
        same = int(np.count_nonzero(self.head == other.head)) if same_head is None else same_head
        compared = HEAD_PERMUTATIONS
        while True:
            if (same + MINHASH_PERMUTATIONS - compared) / MINHASH_PERMUTATIONS < threshold:
                return False  # even if every other minimum agreed
            if same / MINHASH_PERMUTATIONS >= threshold:
                return True  # even if no other minimum agreed
            if compared == MINHASH_PERMUTATIONS:  # unreachable: one of the two above holds
                return same / MINHASH_PERMUTATIONS >= threshold
            end = min(compared + STEP_PERMUTATIONS, MINHASH_PERMUTATIONS)
            mine = self._minima_to(end)[compared:end]
            theirs = other._minima_to(end)[compared:end]
            same += int(np.count_nonzero(mine == theirs))
            compared = end


@text_memo(maxsize=SIGNATURE_CACHE_ENTRIES)
def signature_head(text: str, shingle_size: int = 5) -> npt.NDArray[np.uint64]:
    """The first ``HEAD_PERMUTATIONS`` minima of ``text``'s signature (read-only), memoised in
    the text's partition."""
    return _head_of(shingle_hashes(text, shingle_size))


def _head_of(hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    head = _minima(hashes, _A[:HEAD_PERMUTATIONS], _B[:HEAD_PERMUTATIONS])
    head.setflags(write=False)
    return head


def _minima(
    hashes: npt.NDArray[np.uint64], a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]
) -> npt.NDArray[np.uint64]:
    """Per permutation ``(a, b)``: the least ``(a * hash + b) mod p`` over ``hashes``."""
    permuted = np.outer(a, hashes)
    permuted += b[:, None]
    np.remainder(permuted, _PRIME, out=permuted)
    result: npt.NDArray[np.uint64] = permuted.min(axis=1)
    return result


def shingle_hashes(text: str, size: int) -> npt.NDArray[np.uint64]:
    """The CRC-32 of the UTF-8 bytes of every shingle of ``text`` (:func:`shingles`), one per
    position: a shingle that recurs is hashed again, which no minimum can tell.

    Computed on the text's bytes at once rather than shingle by shingle: CRC-32 is affine in
    the message bits, so the CRC of ``L`` bytes is the CRC of ``L`` zero bytes XOR one table
    entry per byte, chosen by the byte's value and its distance from the end of the message.
    """
    normal = _normalise(text)
    if len(normal) <= size:
        return np.array([zlib.crc32(normal.encode("utf-8"))], dtype=np.uint64)
    data = np.frombuffer(normal.encode("utf-8"), dtype=np.uint8)
    if len(data) == len(normal):  # ASCII: one byte per character
        ends = np.arange(size, len(data) + 1)
        lengths = np.full(len(ends), size)
    else:
        bounds = np.append(np.flatnonzero((data & 0xC0) != 0x80), len(data))  # char starts
        ends = bounds[size:]
        lengths = ends - bounds[: len(ends)]
    shortest, longest = int(lengths.min()), int(lengths.max())
    tables = _crc_tables(longest)
    # Index -1 reads an appended zero byte, which adds nothing to any CRC: a shorter shingle
    # reads it at the distances past its start.
    padded = np.append(data, np.uint8(0)).astype(np.intp)
    crc = tables.zeros[lengths]
    for distance in range(longest):
        at = ends - 1 - distance
        if distance >= shortest:
            at[lengths <= distance] = -1
        crc ^= tables.by_distance[distance].take(padded.take(at))
    hashes: npt.NDArray[np.uint64] = crc.astype(np.uint64)
    return hashes


@dataclass(frozen=True)
class _CrcTables:
    zeros: npt.NDArray[np.uint32]  # [L]: the CRC-32 of L zero bytes
    by_distance: npt.NDArray[np.uint32]  # [k, v]: what byte v with k bytes after it adds


_TABLES: list[_CrcTables] = []  # constants of CRC-32 itself (no text), grown on demand


def _crc_tables(longest: int) -> _CrcTables:
    """CRC-32 tables for messages of up to ``longest`` bytes."""
    known = _TABLES[-1] if _TABLES else None
    if known is not None and len(known.by_distance) >= longest:
        return known
    size = max(longest, 4 * 5)  # 5 characters of up to 4 bytes: the default shingle
    zeros = np.array([zlib.crc32(bytes(n)) for n in range(size + 1)], dtype=np.uint32)
    by_distance = np.array(
        [
            [zlib.crc32(bytes((value,)) + bytes(distance)) ^ int(zeros[distance + 1])
             for value in range(256)]
            for distance in range(size)
        ],
        dtype=np.uint32,
    )  # fmt: skip
    tables = _CrcTables(zeros, by_distance)
    _TABLES.append(tables)
    return tables
