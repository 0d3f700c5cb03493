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
    "may_reach",
    "minhash_signature",
    "shingle_hashes",
    "shingle_residues",
    "shingles",
]

MINHASH_PERMUTATIONS = 128
HEAD_PERMUTATIONS = 32  # of a packed block: enough to rule out most candidates
STEP_PERMUTATIONS = 32  # then compared this many at a time, while the result is open
RESIDUE_CACHE_ENTRIES = 4_096  # chunk texts recur across requests; ~3 KB each at 750 characters
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


def _fixed_point(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """``floor(v * 2**64 / p)`` of each ``v < p``: ``v / p`` in 64-bit fixed point."""
    prime = int(_PRIME)
    return np.array([(int(v) << 64) // prime for v in values], dtype=np.uint64)


# See _fixed_fractions: a / p and b / p in fixed point, and the residue each permutation maps
# to 0 (constants of the hash family, like _A and _B).
_A_FIXED, _B_FIXED = _fixed_point(_A), _fixed_point(_B)
_TO_ZERO = np.array(
    [(-int(b)) * pow(int(a), -1, int(_PRIME)) % int(_PRIME) for a, b in zip(_A, _B, strict=True)],
    dtype=np.uint32,
)
_WHOLE, _PART = divmod(1 << 64, int(_PRIME))  # 2**64 = _WHOLE * p + _PART


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
    """The signature of one text, its minima computed only as far as comparisons need them.

    A minimum of permutation ``i`` is reached at one shingle residue (the permutations are
    one-to-one on residues mod ``p``), so two signatures can agree at ``i`` only if the
    residue where one of them is reached is among the other text's residues. Counting those
    permutations bounds the agreement from above without computing the other text's minima:
    most candidates the packer compares share few shingles with anything packed, and the
    bound rules them out from the packed block's minima alone (computed once per block, not
    once per candidate). Only a pair the bound leaves open is compared minimum by minimum,
    ``STEP_PERMUTATIONS`` at a time, stopping as soon as the minima compared so far decide it.

    Only the text's residues are memoised (:func:`shingle_residues`, in the text's partition,
    for every text a signature is made of). Which minima were computed depends on what the
    text was compared with, which may be a chunk another caller cannot see; so they live in
    this object, which lives for one packing call.
    """

    __slots__ = ("_argmins", "_computed", "_residues", "_values")

    def __init__(self, text: str, shingle_size: int = 5) -> None:
        self._residues = shingle_residues(text, shingle_size)
        self._values = np.empty(MINHASH_PERMUTATIONS, dtype=np.uint64)
        self._argmins = np.empty(MINHASH_PERMUTATIONS, dtype=np.uint32)  # where each is reached
        self._computed = 0  # minima known so far, a prefix of the signature

    @property
    def head(self) -> npt.NDArray[np.uint64]:
        """The first ``HEAD_PERMUTATIONS`` minima."""
        return self._minima_to(HEAD_PERMUTATIONS)

    @property
    def head_argmins(self) -> npt.NDArray[np.uint32]:
        """The residue at which each of the first ``HEAD_PERMUTATIONS`` minima is reached."""
        self._minima_to(HEAD_PERMUTATIONS)
        return self._argmins[:HEAD_PERMUTATIONS]

    @property
    def computed(self) -> int:
        """How many of the ``MINHASH_PERMUTATIONS`` minima have been computed."""
        return self._computed

    def signature(self) -> MinHashSignature:
        """The whole signature (the same as :func:`minhash_signature`)."""
        return MinHashSignature(tuple(self._minima_to(MINHASH_PERMUTATIONS).tolist()))

    def holds(self, residues: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
        """Which of ``residues`` (any shape) are residues of this text's shingles."""
        own = self._residues
        found: npt.NDArray[np.bool_] = own.take(own.searchsorted(residues), mode="clip") == residues
        return found

    def _minima_to(self, end: int) -> npt.NDArray[np.uint64]:
        """The first ``end`` minima, computing those not known yet."""
        start = self._computed
        if end > start:
            reached = self._residues.take(_argmins(self._residues, start, end))
            minima = _A[start:end] * reached
            minima += _B[start:end]
            self._values[start:end] = np.remainder(minima, _PRIME, out=minima)
            self._argmins[start:end] = reached
            self._computed = end
        return self._values[:end]

    def reaches(
        self, other: LazySignature, threshold: float, head_bound: int | None = None
    ) -> bool:
        """``other.signature().similarity(self.signature()) >= threshold``.

        First bounded from ``other``'s minima alone (computing more of them while the bound
        leaves it open). Then, only if it still may, compared minimum by minimum without
        this text's minima: the two agree at permutation ``i`` exactly when ``other``'s is
        reached at a residue ``r`` of this text and every residue of this text that ``other``
        lacks permutes above it (the residues both have permute to at least ``other``'s
        minimum, and a permutation is one-to-one on residues, so none but ``r`` reaches it).
        So only those residues are permuted, only where ``r`` is held, ``STEP_PERMUTATIONS``
        at a time, stopping as soon as the minima compared so far decide it: texts compared
        this far are alike, and share most of their residues.
        ``head_bound``: how many of ``other``'s first ``HEAD_PERMUTATIONS`` minima are
        reached at a residue of this text, when the caller counted them (for many at once).
        """
        if head_bound is None:
            head_bound = int(np.count_nonzero(self.holds(other.head_argmins)))
        bound, bounded = head_bound, HEAD_PERMUTATIONS
        while bounded < MINHASH_PERMUTATIONS and may_reach(bound, bounded, threshold):
            end = max(other.computed, min(bounded + STEP_PERMUTATIONS, MINHASH_PERMUTATIONS))
            other._minima_to(end)
            bound += int(np.count_nonzero(self.holds(other._argmins[bounded:end])))
            bounded = end
        if not may_reach(bound, bounded, threshold):
            return False  # even if every minimum the bound leaves open agreed
        own_only = self._residues[~other.holds(self._residues)]  # residues ``other`` lacks
        same, compared = 0, 0
        while True:
            if not may_reach(same, compared, threshold):
                return False  # even if every other minimum agreed
            if same / MINHASH_PERMUTATIONS >= threshold:
                return True  # even if no other minimum agreed
            end = min(compared + STEP_PERMUTATIONS, MINHASH_PERMUTATIONS)
            theirs = other._minima_to(end)
            held = compared + np.flatnonzero(self.holds(other._argmins[compared:end]))
            if held.size:
                same += held.size if not own_only.size else _below(own_only, held, theirs)
            compared = end


def _argmins(residues: npt.NDArray[np.uint32], start: int, end: int) -> npt.NDArray[np.intp]:
    """For each permutation ``i`` in ``start..end``, the index of the residue ``r`` with the
    least ``(a_i r + b_i) mod p``: the least fixed-point fraction (:func:`_fixed_fractions`),
    or the residue the permutation maps to 0 where it is one of ``residues``."""
    rows = np.arange(start, end)
    at: npt.NDArray[np.intp] = _fixed_fractions(residues, rows).argmin(axis=1)
    position, held = _where_held(residues, _TO_ZERO[rows])
    at[held] = position[held]
    return at


def _below(
    residues: npt.NDArray[np.uint32], rows: npt.NDArray[np.intp], minima: npt.NDArray[np.uint64]
) -> int:
    """For how many permutations ``i`` of ``rows`` every one of ``residues`` permutes above
    ``minima[i]``.

    ``q > m`` exactly when ``q``'s fixed-point fraction (:func:`_fixed_fractions`) is above
    ``floor(m * 2**64 / p)`` (computed as ``m * _WHOLE + m * _PART // p``, each term below
    ``2**64``), for every ``q`` but 0; and a residue mapped to 0 is above no minimum.
    """
    least = _fixed_fractions(residues, rows).min(axis=1)
    reached = minima[rows]
    bound = reached * np.uint64(_WHOLE) + reached * np.uint64(_PART) // _PRIME
    _, to_zero = _where_held(residues, _TO_ZERO[rows])
    return int(np.count_nonzero((least > bound) & ~to_zero))


def _fixed_fractions(
    residues: npt.NDArray[np.uint32], rows: npt.NDArray[np.intp]
) -> npt.NDArray[np.uint64]:
    """``(A_i r + B_i) mod 2**64`` with ``A_i = floor(a_i 2**64 / p)``, ``B_i = floor(b_i 2**64
    / p)`` (numpy's unsigned arithmetic wraps mod ``2**64``), one row per permutation ``i`` of
    ``rows``, one column per residue ``r``: ``q 2**64 / p - e`` for ``q = (a_i r + b_i) mod p``
    and an error ``0 <= e < r + 1 <= 2**32``.

    So it is strictly increasing in ``q`` for every ``q >= 1``: two of them differ by at
    least ``2**64 / p > 2**32``, more than the errors differ. Only ``q = 0`` may wrap round to
    near ``2**64``; each permutation maps one residue (``_TO_ZERO``) to 0.
    """
    fixed: npt.NDArray[np.uint64] = np.multiply.outer(_A_FIXED[rows], residues)
    fixed += _B_FIXED[rows, None]
    return fixed


def _where_held(
    residues: npt.NDArray[np.uint32], values: npt.NDArray[np.uint32]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """Where each of ``values`` is or would be in the sorted ``residues``, and whether it is."""
    position = residues.searchsorted(values)
    held: npt.NDArray[np.bool_] = residues.take(position, mode="clip") == values
    return position, held


def may_reach(agreeing: int, considered: int, threshold: float) -> bool:
    """Whether a similarity of ``threshold`` is still possible when at most ``agreeing`` of
    the first ``considered`` minima agree (and every other may)."""
    return (agreeing + MINHASH_PERMUTATIONS - considered) / MINHASH_PERMUTATIONS >= threshold


@text_memo(maxsize=RESIDUE_CACHE_ENTRIES)
def shingle_residues(text: str, shingle_size: int = 5) -> npt.NDArray[np.uint32]:
    """The distinct shingle hashes of ``text`` reduced mod ``p``, ascending (read-only): all a
    signature depends on, as ``(a * hash + b) mod p`` only depends on ``hash mod p``.
    Memoised in the text's partition."""
    hashes = shingle_hashes(text, shingle_size)
    residues = np.where(hashes >= _PRIME, hashes - _PRIME, hashes).astype(np.uint32)
    residues.sort()  # then each value once (numpy's unique is several times slower here)
    if len(residues) > 1:
        residues = residues[np.append(True, residues[1:] != residues[:-1])]
    residues.setflags(write=False)
    return residues


def shingle_hashes(text: str, size: int) -> npt.NDArray[np.uint64]:
    """The CRC-32 of the UTF-8 bytes of every shingle of ``text`` (:func:`shingles`), one per
    position: a shingle that recurs is hashed again."""
    return _shingle_crcs(_normalise(text), size).astype(np.uint64)


def _shingle_crcs(normal: str, size: int) -> npt.NDArray[np.uint32]:
    """:func:`shingle_hashes` of a normalised text, computed on its bytes at once rather than
    shingle by shingle: CRC-32 is affine in the message bits, so the CRC of ``L`` bytes is the
    CRC of ``L`` zero bytes XOR one table entry per byte, chosen by the byte's value and its
    distance from the end of the message."""
    encoded = normal.encode("utf-8")
    if len(normal) <= size:
        return np.array([zlib.crc32(encoded)], dtype=np.uint32)
    data = np.frombuffer(encoded, dtype=np.uint8).astype(np.intp)
    runs = _run_crcs(data, size)
    if len(data) == len(normal):  # ASCII: every shingle is a run of ``size`` bytes
        return runs
    bounds = np.append(np.flatnonzero((data & 0xC0) != 0x80), len(data))  # char starts
    starts, ends = bounds[: len(bounds) - size], bounds[size:]
    lengths = ends - starts
    crc = runs.take(starts)  # right for every shingle of ``size`` bytes
    wide = np.flatnonzero(lengths != size)  # shingles of more bytes than characters
    if wide.size:
        crc[wide] = _wide_crcs(data, ends.take(wide), lengths.take(wide))
    return crc


def _run_crcs(data: npt.NDArray[np.intp], size: int) -> npt.NDArray[np.uint32]:
    """The CRC-32 of ``data[k : k + size]`` for every ``k``, one byte distance at a time."""
    count = len(data) - size + 1
    tables = _crc_tables(size)
    crc: npt.NDArray[np.uint32] = np.full(count, tables.zeros[size], dtype=np.uint32)
    for distance in range(size):
        last = len(data) - distance
        crc ^= tables.by_distance[distance].take(data[last - count : last])
    return crc


def _wide_crcs(
    data: npt.NDArray[np.intp], ends: npt.NDArray[np.intp], lengths: npt.NDArray[np.intp]
) -> npt.NDArray[np.uint32]:
    """The CRC-32 of ``data[end - length : end]`` for each ``end`` and ``length``: every byte
    of all of them in one run, each byte's entry XORed into its shingle's."""
    tables = _crc_tables(int(lengths.max()))
    offsets = np.cumsum(lengths) - lengths  # where each shingle's bytes start in the run
    distance = np.arange(int(offsets[-1] + lengths[-1])) - np.repeat(offsets, lengths)
    position = np.repeat(ends - 1, lengths) - distance
    entries = tables.by_distance.reshape(-1).take(distance * 256 + data.take(position))
    crc: npt.NDArray[np.uint32] = np.bitwise_xor.reduceat(entries, offsets)
    crc ^= tables.zeros.take(lengths)
    return crc


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
