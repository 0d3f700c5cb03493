"""A namespace's embeddings in memory, one contiguous block per scope set.

Every chunk of a document holding scopes ``S`` sits in the group of ``S``, in row-id order,
so the rows a caller may see are whole groups (those whose scope set meets the caller's
scopes), each scanned as one contiguous slice: no mask, no copy, no hidden row read. A group
owns spare capacity past its rows, where an append writes; older matrices, which readers on
older snapshots may still hold, view only the rows before it. A group that loses or gains
rows other than at its end is rebuilt as a new array, so no array a reader holds ever changes
under it. The group's int8 copy (``codes``) follows the same rules, row for row. Chunks of a
document with no scopes are visible to nobody and are not held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from graphctx.store.sqlite.vector_codes import RowCodes

__all__ = ["Int64Array", "NamespaceMatrix", "ScopeGroup", "group_index", "with_capacity"]

Int64Array = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class ScopeGroup:
    scopes: frozenset[str]
    rowids: Int64Array  # ascending
    matrix: F32  # (size, dim): ``buffer[:size]``
    buffer: F32  # (capacity, dim)
    max_norm: float  # largest row norm, for the re-scoring band
    codes: RowCodes | None = None  # the int8 copy for the coarse pass (:mod:`.vector_codes`)

    @property
    def size(self) -> int:
        return int(self.rowids.shape[0])


@dataclass(frozen=True)
class NamespaceMatrix:
    generation: int
    layout: int  # the store's count of deletes and scope rewrites when this was read
    dim: int  # 0 while the namespace holds no visible chunk
    last_rowid: int  # the highest chunk row id read, visible or not (-1: none)
    groups: Mapping[frozenset[str], ScopeGroup]
    by_scope: Mapping[str, tuple[frozenset[str], ...]] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(g.size for g in self.groups.values())

    @property
    def chunk_rowids(self) -> Int64Array:
        """Every held row id, ascending."""
        if not self.groups:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate([g.rowids for g in self.groups.values()]))

    def visible_groups(self, scopes: frozenset[str]) -> list[ScopeGroup]:
        """The groups whose scope set meets ``scopes``, each once, in a fixed order."""
        keys = {key for scope in scopes for key in self.by_scope.get(scope, ())}
        return [self.groups[key] for key in sorted(keys, key=sorted)]


def group_index(
    groups: Mapping[frozenset[str], ScopeGroup],
) -> dict[str, tuple[frozenset[str], ...]]:
    index: dict[str, list[frozenset[str]]] = {}
    for key in groups:
        for scope in key:
            index.setdefault(scope, []).append(key)
    return {scope: tuple(keys) for scope, keys in index.items()}


def with_capacity(rows: int, dim: int) -> F32:
    """A buffer for ``rows`` rows and room for about a quarter as many again (np.empty: the
    spare pages are not committed until written)."""
    return np.empty((rows + rows // 4 + 16, dim), dtype=np.float32)


def max_norm_of(matrix: F32) -> float:
    if matrix.shape[0] == 0:
        return 0.0
    return float(np.sqrt(np.einsum("ij,ij->i", matrix, matrix).max()))
