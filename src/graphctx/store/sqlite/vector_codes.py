"""An int8 copy of a scope group's rows, and score bounds from it that provably hold.

Each row ``r`` is held as ``s * c + d``: ``s = max|r_i| / 127``, ``c = rint(r / s)`` (int8),
``d`` the remainder; the query ``q`` likewise as ``t * e + f``. The integer dot product
``D = c . e`` is exact (int32 accumulation, ``512 * 127^2`` fits), and

    r . q - s t D = s c . f + d . q,   so   |r . q - s t D| <= s |c| |f| + |d| |q|.

The exact score the scan ranks by (:func:`~graphctx.store.sqlite.vector_scan.exact_scores`)
is ``r . q`` rounded once to float32 after a float64 sum: within ``2^-24 |r| |q|`` (rounding)
plus about ``2^-44 |r| |q|`` (the sum). A row's slack therefore adds ``2^-23 |r|``, whose
spare ``2^-24 |r| |q|`` also covers every float64 rounding in computing the bound itself
(relative errors near ``2^-52``), and a constant ``2^-140`` the absolute rounding of a float32
subnormal. So ``s t D -+ (s |c| |f| + slack |q| + 2^-140)`` brackets the exact score of every
row. Scores that could overflow float32 (``|r| |q| > 2^120``) are left to the float32 scan.

The integer kernel is numkong's (the optional ``fastscan`` extra): numpy has no fast int8 dot
product (about 7x slower than float32 BLAS on the same rows). Without it no copy is kept and
the float32 scan runs alone. A group with a non-finite value keeps no copy either.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import numpy.typing as npt

__all__ = [
    "KERNEL",
    "CodeCopy",
    "QueryCodes",
    "RowCodes",
    "assembled",
    "bounds",
    "encode",
    "extended",
    "joined",
    "query_codes",
    "with_room",
]

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I8 = npt.NDArray[np.int8]
CODE_MAX = 127
ENCODE_BATCH = 256  # rows converted to float64 per step (their temporaries stay in cache)
_ROUNDING_SLACK = 2.0**-23
_UNDERFLOW_SLACK = 2.0**-140  # a float32 subnormal rounds with an absolute error <= 2^-150
NORM_PRODUCT_LIMIT = 2.0**120  # beyond this a float32 score may overflow: no int8 pass


def _kernel() -> ModuleType | None:
    try:
        return importlib.import_module("numkong")
    except ImportError:
        return None


KERNEL = _kernel()


@dataclass(frozen=True)
class RowCodes:
    """The int8 rows of a group (``buffer[:size]``) and, per row, ``scale`` (``s``),
    ``spread`` (an upper bound on ``s |c|``) and ``slack`` (on ``|d| + 2^-23 |r|``)."""

    codes: I8
    buffer: I8
    scale: F64
    spread: F64
    slack: F64


def with_room(capacity: int, dim: int) -> I8:
    return np.empty((capacity, dim), dtype=np.int8)


def _encode_into(rows: F32, out: I8) -> tuple[F64, F64, F64] | None:
    wide = rows.astype(np.float64)
    top = np.abs(wide).max(axis=1, initial=0.0)
    if not np.isfinite(top).all():  # max propagates NaN and infinity
        return None
    norms = np.sqrt(np.einsum("ij,ij->i", wide, wide))
    scale = np.where(top > 0, top / CODE_MAX, 1.0)
    codes = wide / scale[:, None]
    np.rint(codes, out=codes)
    out[:] = codes
    spread = scale * np.sqrt(np.einsum("ij,ij->i", codes, codes))
    codes *= scale[:, None]
    wide -= codes  # the remainder d = r - s c
    slack = np.sqrt(np.einsum("ij,ij->i", wide, wide)) + _ROUNDING_SLACK * norms
    return scale, spread, slack


def _encode_rows(rows: F32, out: I8) -> tuple[F64, F64, F64] | None:
    parts: list[tuple[F64, F64, F64]] = []
    for start in range(0, rows.shape[0], ENCODE_BATCH):
        stop = min(start + ENCODE_BATCH, rows.shape[0])
        part = _encode_into(rows[start:stop], out[start:stop])
        if part is None:
            return None
        parts.append(part)
    empty = np.zeros(0, dtype=np.float64)
    return (
        np.concatenate([empty, *(p[0] for p in parts)]),
        np.concatenate([empty, *(p[1] for p in parts)]),
        np.concatenate([empty, *(p[2] for p in parts)]),
    )


def encode(matrix: F32, capacity: int) -> RowCodes | None:
    """The codes of ``matrix`` in a new buffer of ``capacity`` rows (None: no kernel, or a
    value that is not finite)."""
    if KERNEL is None:
        return None
    buffer = with_room(capacity, matrix.shape[1])
    per_row = _encode_rows(matrix, buffer)
    if per_row is None:
        return None
    return RowCodes(buffer[: matrix.shape[0]], buffer, *per_row)


CodeCopy = tuple[npt.NDArray[np.intp], RowCodes | None, npt.NDArray[np.int64]]


def assembled(matrix: F32, capacity: int, copies: list[CodeCopy]) -> RowCodes | None:
    """The codes of ``matrix`` in a new buffer of ``capacity`` rows, copied where a row's
    codes are already held (``(rows, source, source rows)``: the same float row, so the same
    codes) and encoded for the others."""
    if KERNEL is None or any(source is None for _, source, _ in copies):
        return None
    size = matrix.shape[0]
    buffer = with_room(capacity, matrix.shape[1])
    scale, spread, slack = (np.empty(size, dtype=np.float64) for _ in range(3))
    copied = np.zeros(size, dtype=np.bool_)
    for rows, source, slots in copies:
        assert source is not None
        buffer[rows] = source.codes[slots]
        scale[rows], spread[rows], slack[rows] = (
            source.scale[slots],
            source.spread[slots],
            source.slack[slots],
        )
        copied[rows] = True
    missing = np.flatnonzero(~copied)
    if missing.shape[0]:
        fresh = with_room(missing.shape[0], matrix.shape[1])
        per_row = _encode_rows(matrix[missing], fresh)
        if per_row is None:
            return None
        buffer[missing] = fresh
        scale[missing], spread[missing], slack[missing] = per_row
    return RowCodes(buffer[:size], buffer, scale, spread, slack)


def extended(old: RowCodes | None, size: int, added: F32, buffer: I8) -> RowCodes | None:
    """``old`` (``size`` rows) plus the codes of ``added``, written into ``buffer`` past
    ``size`` (``buffer`` is ``old.buffer`` when it has room; else a new one the caller made).
    Rows before ``size`` in ``old.buffer`` are never written."""
    if old is None:
        return None
    if buffer is not old.buffer:
        buffer[:size] = old.codes
    per_row = _encode_rows(added, buffer[size : size + added.shape[0]])
    if per_row is None:
        return None
    total = size + added.shape[0]
    return RowCodes(
        buffer[:total],
        buffer,
        np.concatenate([old.scale, per_row[0]]),
        np.concatenate([old.spread, per_row[1]]),
        np.concatenate([old.slack, per_row[2]]),
    )


def joined(parts: list[RowCodes]) -> RowCodes:
    """Several groups' codes as one block (for many small groups: one kernel call)."""
    codes = np.concatenate([p.codes for p in parts])
    return RowCodes(
        codes,
        codes,
        np.concatenate([p.scale for p in parts]),
        np.concatenate([p.spread for p in parts]),
        np.concatenate([p.slack for p in parts]),
    )


@dataclass(frozen=True)
class QueryCodes:
    codes: I8
    scale: float
    remainder: float  # |f|
    norm: float  # |q|


def query_codes(q: F32) -> QueryCodes | None:
    wide = q.astype(np.float64)
    if not np.isfinite(wide).all():
        return None
    top = float(np.abs(wide).max(initial=0.0))
    scale = top / CODE_MAX if top > 0 else 1.0
    codes = np.rint(wide / scale)
    rest = wide - scale * codes
    return QueryCodes(
        codes.astype(np.int8), scale, float(np.sqrt(rest @ rest)), float(np.sqrt(wide @ wide))
    )


def bounds(rows: RowCodes, q: QueryCodes) -> tuple[F64, F64]:
    """(lower, upper) bounds on every row's exact score."""
    assert KERNEL is not None
    dots = np.asarray(KERNEL.cdist(q.codes[None], rows.codes, metric="dot")).reshape(-1)
    estimate = (rows.scale * q.scale) * dots
    error = rows.spread * q.remainder + rows.slack * q.norm + _UNDERFLOW_SLACK
    return estimate - error, estimate + error
