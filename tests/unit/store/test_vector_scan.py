"""The grouped vector scan returns exactly the exact scan's top k over the visible rows only."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.store.sqlite.vector_groups import (
    NamespaceMatrix,
    ScopeGroup,
    group_index,
    max_norm_of,
    with_capacity,
)
from graphctx.store.sqlite.vector_scan import MAX_SEPARATE_GROUPS, exact_scores, top_k_visible

SCOPES = ("a", "b", "c", "d")
HIDDEN_NORM = 1e3  # a hidden row this long would top every list it were scored in


def _matrix(rows: npt.NDArray[np.float32], keys: list[frozenset[str]]) -> NamespaceMatrix:
    """Row ``i`` has row id ``i`` and sits in the group of ``keys[i]`` (empty: held nowhere)."""
    groups: dict[frozenset[str], ScopeGroup] = {}
    for key in sorted({k for k in keys if k}, key=sorted):
        ids = np.asarray([i for i, k in enumerate(keys) if k == key], dtype=np.int64)
        buffer = with_capacity(ids.shape[0], rows.shape[1])
        buffer[: ids.shape[0]] = rows[ids]
        matrix = buffer[: ids.shape[0]]
        groups[key] = ScopeGroup(key, ids, matrix, buffer, max_norm_of(matrix))
    return NamespaceMatrix(1, 0, rows.shape[1], len(keys) - 1, groups, group_index(groups))


def _reference(
    rows: npt.NDArray[np.float32],
    keys: list[frozenset[str]],
    query: npt.NDArray[np.float32],
    scopes: frozenset[str],
    limit: int,
) -> list[tuple[int, float]]:
    visible = [i for i, k in enumerate(keys) if not k.isdisjoint(scopes)]
    if not visible:
        return []
    scores = exact_scores(rows[visible], query)
    ranked = sorted(zip(visible, scores.tolist(), strict=True), key=lambda p: (-p[1], p[0]))
    return ranked[:limit]


scope_sets = st.frozensets(st.sampled_from(SCOPES), max_size=3)


@st.composite
def worlds(
    draw: st.DrawFn,
) -> tuple[npt.NDArray[np.float32], list[frozenset[str]], npt.NDArray[np.float32]]:
    n = draw(st.integers(1, 120))
    dim = draw(st.sampled_from([3, 8, 17, 64]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # Few distinct values make exact ties common; duplicated rows make them certain.
    rows = (rng.integers(-3, 4, size=(n, dim)) / 3).astype(np.float32)
    if draw(st.booleans()):
        rows = rng.standard_normal((n, dim)).astype(np.float32)
    duplicates = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))))
    for src, dst in duplicates:
        rows[dst] = rows[src]
    keys = draw(st.lists(scope_sets, min_size=n, max_size=n))
    query = rng.standard_normal(dim).astype(np.float32)
    return rows, keys, query


@settings(max_examples=300)
@given(worlds(), st.frozensets(st.sampled_from(SCOPES), min_size=1), st.integers(1, 60))
def test_top_k_equals_the_exact_scan_of_the_visible_rows(
    world: tuple[npt.NDArray[np.float32], list[frozenset[str]], npt.NDArray[np.float32]],
    scopes: frozenset[str],
    limit: int,
) -> None:
    rows, keys, query = world
    assert top_k_visible(_matrix(rows, keys), query, scopes, limit) == _reference(
        rows, keys, query, scopes, limit
    )


@settings(max_examples=150)
@given(worlds(), st.frozensets(st.sampled_from(SCOPES), min_size=1), st.integers(1, 60))
def test_a_hidden_row_is_never_returned_however_well_it_would_score(
    world: tuple[npt.NDArray[np.float32], list[frozenset[str]], npt.NDArray[np.float32]],
    scopes: frozenset[str],
    limit: int,
) -> None:
    rows, keys, query = world
    hidden = [i for i, k in enumerate(keys) if k.isdisjoint(scopes)]
    rows[hidden] = query * HIDDEN_NORM  # the best possible match, many times over
    found = top_k_visible(_matrix(rows, keys), query, scopes, limit)
    assert {rowid for rowid, _ in found}.isdisjoint(hidden)
    assert found == _reference(rows, keys, query, scopes, limit)


def test_only_groups_meeting_the_callers_scopes_are_scanned() -> None:
    rows = np.eye(4, dtype=np.float32)
    keys = [frozenset({"a"}), frozenset({"b"}), frozenset({"a", "c"}), frozenset({"d"})]
    data = _matrix(rows, keys)
    scanned = data.visible_groups(frozenset({"a", "x"}))
    assert [g.scopes for g in scanned] == [frozenset({"a"}), frozenset({"a", "c"})]


def test_many_small_groups_rank_as_few_large_ones() -> None:
    rng = np.random.default_rng(7)
    n = 3 * MAX_SEPARATE_GROUPS
    rows = rng.standard_normal((n, 16)).astype(np.float32)
    keys = [frozenset({"a", f"only-{i}"}) for i in range(n)]  # one group per row
    query = rng.standard_normal(16).astype(np.float32)
    scopes = frozenset({"a"})
    expected = _reference(rows, keys, query, scopes, 25)
    assert top_k_visible(_matrix(rows, keys), query, scopes, 25) == expected
