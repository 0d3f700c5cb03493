"""Exact top-k cosine search over the visible scope groups of a namespace matrix.

Only the rows of groups whose scope set meets the caller's scopes are read, each group a
contiguous block scored by BLAS in one pass; hidden rows are never touched. BLAS picks
kernels by block, so a row's last bits depend on where it sits; the scan is therefore only
a coarse filter. Every row whose coarse score is within the worst-case rounding band of the
k-th best (``4 * dim * 2^-24 * |q| * max row norm``, twice the bound on two float32 dot
products of any summation order) is re-scored exactly: float32 products summed in float64,
rounded once to float32, which does not depend on the row's position or on any other row.
The band provably holds the exact top k, so the result is the exact top k by the re-scored
value, ties broken by lower row id.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from graphctx.store.records import Vector
from graphctx.store.sqlite.vector_groups import NamespaceMatrix, ScopeGroup

__all__ = ["MAX_SEPARATE_GROUPS", "exact_scores", "top_k_visible"]

F32 = npt.NDArray[np.float32]
MAX_SEPARATE_GROUPS = 64  # more visible groups than this are scanned as one gathered block
_UNIT_ROUNDOFF = 2.0**-24


def exact_scores(rows: F32, q: F32) -> npt.NDArray[np.float64]:
    """Each row's dot product with ``q``: exact float32 products (24 + 24 bits fit a double),
    summed in float64 and rounded to float32, the same bits wherever the row sits."""
    wide = rows.astype(np.float64) @ q.astype(np.float64)
    return wide.astype(np.float32).astype(np.float64)


def _blocks(groups: Sequence[ScopeGroup]) -> list[tuple[F32, npt.NDArray[np.int64]]]:
    if len(groups) <= MAX_SEPARATE_GROUPS:
        return [(g.matrix, g.rowids) for g in groups]
    # Many small groups (documents with many distinct scope sets): one copy beats hundreds
    # of tiny BLAS calls.
    return [
        (np.concatenate([g.matrix for g in groups]), np.concatenate([g.rowids for g in groups]))
    ]


def top_k_visible(
    data: NamespaceMatrix, query: Vector, scopes: frozenset[str], limit: int
) -> list[tuple[int, float]]:
    """(chunk rowid, cosine) of the best visible rows; ties broken by lower rowid."""
    groups = data.visible_groups(scopes)
    count = sum(g.size for g in groups)
    if count == 0 or limit <= 0:
        return []
    q = np.ascontiguousarray(query, dtype=np.float32)
    blocks = _blocks(groups)
    coarse = np.concatenate([matrix @ q for matrix, _ in blocks])
    k = min(limit, count)
    kth = float(np.partition(coarse, count - k)[count - k]) if k < count else float(coarse.min())
    max_norm = max(g.max_norm for g in groups)
    band = 4.0 * q.shape[0] * _UNIT_ROUNDOFF * float(np.linalg.norm(q)) * max_norm
    chosen = np.flatnonzero(coarse >= kth - band)
    starts = np.cumsum([0] + [rowids.shape[0] for _, rowids in blocks])
    block_of = np.searchsorted(starts, chosen, side="right") - 1
    rows = np.empty((chosen.shape[0], q.shape[0]), dtype=np.float32)
    rowids = np.empty(chosen.shape[0], dtype=np.int64)
    for b in np.unique(block_of).tolist():
        here = block_of == b
        local = chosen[here] - starts[b]
        rows[here] = blocks[b][0][local]
        rowids[here] = blocks[b][1][local]
    scores = exact_scores(rows, q)
    order = np.lexsort((rowids, -scores))[:k]
    return [(int(rowids[i]), float(scores[i])) for i in order]
