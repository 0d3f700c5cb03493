"""Exact top-k cosine search over the visible scope groups of a namespace matrix.

Only the rows of groups whose scope set meets the caller's scopes are read, each group a
contiguous block scanned in one pass; hidden rows are never touched. The scan is only a
coarse filter; the rows it keeps are re-scored exactly: float32 products summed in float64,
rounded once to float32, which does not depend on the row's position or on any other row.
The result is the exact top k by the re-scored value, ties broken by lower row id.

Two coarse passes, each keeping a set that provably holds the exact top k:

- int8 (when every visible group holds an int8 copy, :mod:`.vector_codes`): a lower and an
  upper bound on each row's exact score, from an exact integer dot product; kept are the
  rows whose upper bound reaches the k-th best lower bound. It reads a quarter of the bytes.
- float32 BLAS: BLAS picks kernels by block, so a row's last bits depend on where it sits;
  kept are the rows within the worst-case rounding band of the k-th best
  (``4 * dim * 2^-24 * |q| * max row norm``, twice the bound on two float32 dot products of
  any summation order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from graphctx.store.records import Vector
from graphctx.store.sqlite import vector_codes
from graphctx.store.sqlite.vector_groups import NamespaceMatrix, ScopeGroup

__all__ = ["MAX_SEPARATE_GROUPS", "exact_scores", "top_k_visible"]

F32 = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.intp]
MAX_SEPARATE_GROUPS = 64  # more visible groups than this are scanned as one gathered block
_UNIT_ROUNDOFF = 2.0**-24


def exact_scores(rows: F32, q: F32) -> npt.NDArray[np.float64]:
    """Each row's dot product with ``q``: exact float32 products (24 + 24 bits fit a double),
    summed in float64 and rounded to float32, the same bits wherever the row sits."""
    wide = rows.astype(np.float64) @ q.astype(np.float64)
    return wide.astype(np.float32).astype(np.float64)


def _blocks(groups: Sequence[ScopeGroup]) -> list[F32]:
    if len(groups) <= MAX_SEPARATE_GROUPS:
        return [g.matrix for g in groups]
    # Many small groups (documents with many distinct scope sets): one copy beats hundreds
    # of tiny BLAS calls.
    return [np.concatenate([g.matrix for g in groups])]


def _coarse_codes(
    groups: Sequence[ScopeGroup], q: F32
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """(lower, upper) bounds on every visible row's exact score from the int8 copies, in
    the order of ``groups``; None when a group has none, or the query is not finite or so
    long that a score might overflow."""
    query = vector_codes.query_codes(q)
    held = [g.codes for g in groups if g.codes is not None]
    if query is None or len(held) < len(groups):
        return None
    if not query.norm * max(g.max_norm for g in groups) <= vector_codes.NORM_PRODUCT_LIMIT:
        return None  # (also when a float32 row norm overflowed: inf * 0 is NaN)
    if len(held) > MAX_SEPARATE_GROUPS:
        held = [vector_codes.joined(held)]
    parts = [vector_codes.bounds(c, query) for c in held]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _candidates_by_codes(groups: Sequence[ScopeGroup], q: F32, k: int) -> IntArray | None:
    """Rows whose upper bound reaches the k-th best lower bound: at least k rows score at or
    above that, so every row of the exact top k is among them."""
    found = _coarse_codes(groups, q)
    if found is None:
        return None
    lower, upper = found
    count = lower.shape[0]
    kth = float(np.partition(lower, count - k)[count - k]) if k < count else -np.inf
    return np.flatnonzero(upper >= kth)


def _candidates_by_blas(groups: Sequence[ScopeGroup], q: F32, k: int) -> IntArray:
    """Rows whose float32 BLAS score is within the rounding band of the k-th best."""
    count = sum(g.size for g in groups)
    coarse = np.concatenate([matrix @ q for matrix in _blocks(groups)])
    kth = float(np.partition(coarse, count - k)[count - k]) if k < count else float(coarse.min())
    max_norm = max(g.max_norm for g in groups)
    band = 4.0 * q.shape[0] * _UNIT_ROUNDOFF * float(np.linalg.norm(q)) * max_norm
    return np.flatnonzero(coarse >= kth - band)


def top_k_visible(
    data: NamespaceMatrix, query: Vector, scopes: frozenset[str], limit: int
) -> list[tuple[int, float]]:
    """(chunk rowid, cosine) of the best visible rows; ties broken by lower rowid."""
    groups = data.visible_groups(scopes)
    count = sum(g.size for g in groups)
    if count == 0 or limit <= 0:
        return []
    q = np.ascontiguousarray(query, dtype=np.float32)
    k = min(limit, count)
    chosen = _candidates_by_codes(groups, q, k)
    if chosen is None:
        chosen = _candidates_by_blas(groups, q, k)
    starts = np.cumsum([0] + [g.size for g in groups])
    group_of = np.searchsorted(starts, chosen, side="right") - 1
    rows = np.empty((chosen.shape[0], q.shape[0]), dtype=np.float32)
    rowids = np.empty(chosen.shape[0], dtype=np.int64)
    for n in np.unique(group_of).tolist():
        here = group_of == n
        local = chosen[here] - starts[n]
        rows[here] = groups[n].matrix[local]
        rowids[here] = groups[n].rowids[local]
    scores = exact_scores(rows, q)
    order = np.lexsort((rowids, -scores))[:k]
    return [(int(rowids[i]), float(scores[i])) for i in order]
