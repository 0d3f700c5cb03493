"""The optional approximate vector index of the embedded store (graphctx.store.sqlite.ann).

It must never return a row outside the caller's scopes (the filter is inside the faiss
search), never serve a deleted or re-scoped chunk, keep up with appends, deletes and reused
row ids, and find what the exact scan finds at small scale.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.store.records import DocumentDates, DocumentWrite, NewChunk, NewDocument
from graphctx.store.sqlite.ann import AnnSettings, FilteredIvfIndex, load_faiss
from graphctx.store.sqlite.store import SqliteGraphStore

pytest.importorskip("faiss")

NS = "ann"
EMBEDDER = "test-embedder"
SCOPES = ("a", "b", "c", "d")
# every visible set goes to the index; every list probed (exhaustive but for SQ8 rounding)
EVERY_SEARCH = AnnSettings(min_visible_rows=1, nprobe=10_000)
F32 = npt.NDArray[np.float32]


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> F32:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    normed: F32 = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return normed


def document(key: str, scopes: frozenset[str], vector: F32) -> DocumentWrite:
    text = f"document {key}"
    digest = hashlib.sha256(f"{text}{sorted(scopes)}".encode()).hexdigest()
    doc = NewDocument(
        namespace=NS,
        document_id=key,
        source_uri=f"test://{key}",
        scopes=scopes,
        source_version="1",
        title=None,
        media_type="text",
        text=text,
        dates=DocumentDates(),
        declared_superseded_by=None,
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        metadata_hash=digest,
    )
    return DocumentWrite(doc, (NewChunk(0, 0, len(text), text, vector),), None)


async def write_all(store: SqliteGraphStore, writes: list[DocumentWrite]) -> None:
    results = await store.write_documents(NS, writes, EMBEDDER)
    assert not [r for r in results if isinstance(r, Exception)]


async def search(
    store: SqliteGraphStore, query: F32, scopes: frozenset[str], limit: int
) -> list[tuple[str, float]]:
    hits = await store.vector_search(NS, query, scopes, limit, time.monotonic() + 30)
    return [(h.chunk_id, h.score) for h in hits]


def doc_of(chunk_id: str) -> str:
    return chunk_id.split("@", 1)[0]


# --- the filter inside the faiss search --------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(40, 400),
    share=st.floats(0.0, 1.0),
    k=st.integers(1, 60),
)
def test_the_index_returns_only_allowed_row_ids(seed: int, n: int, share: float, k: int) -> None:
    rng = np.random.default_rng(seed)
    rows = unit_rows(rng, n, 16)
    rowids = np.sort(rng.choice(10 * n, size=n, replace=False)).astype(np.int64)
    index = FilteredIvfIndex(load_faiss(), 16, max(1, n // 39))
    index.train(rows)
    index.add(rowids, rows)
    allowed = rowids[rng.random(n) < share]
    query = unit_rows(rng, 1, 16)[0]
    found = index.candidates(query, allowed, k, nprobe=10_000)
    assert set(found.tolist()) <= set(allowed.tolist())
    assert len(found) == min(k, len(allowed))  # every list probed: all allowed rows reachable


# --- the store's ANN path against a model of who may see what ----------------------------
scope_sets = st.frozensets(st.sampled_from(SCOPES), max_size=2)


@dataclass(frozen=True)
class History:
    seed: int
    scopes: list[frozenset[str]]  # of d0, d1, ...
    deleted: set[int]
    narrowed: dict[int, frozenset[str]]  # new scopes = old & these
    added: list[frozenset[str]]  # of n0, n1, ... written last
    principals: list[frozenset[str]]


@st.composite
def histories(draw: st.DrawFn) -> History:
    n = draw(st.integers(5, 30))
    return History(
        seed=draw(st.integers(0, 2**32 - 1)),
        scopes=[draw(scope_sets) for _ in range(n)],
        deleted=draw(st.sets(st.integers(0, n - 1))),
        narrowed=draw(st.dictionaries(st.integers(0, n - 1), scope_sets)),
        added=[draw(scope_sets) for _ in range(draw(st.integers(0, 10)))],
        principals=[draw(st.frozensets(st.sampled_from(SCOPES), min_size=1)) for _ in range(4)],
    )


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=histories())
def test_the_ann_path_never_returns_a_chunk_outside_the_callers_scopes(
    tmp_path_factory: pytest.TempPathFactory, history: History
) -> None:
    """Index built, then documents deleted, narrowed and added (the index now stale): every
    principal's results are visible to it now, and none is a deleted document's."""
    asyncio.run(_check_history(tmp_path_factory.mktemp("ann") / "s.sqlite", history))


async def _check_history(path: Path, history: History) -> None:
    rng = np.random.default_rng(history.seed)
    initial, added = history.scopes, history.added
    vectors = unit_rows(rng, len(initial) + len(added), 8)
    store = SqliteGraphStore(path, ann=EVERY_SEARCH)
    await store.open()
    try:
        now = {f"d{i}": s for i, s in enumerate(initial)}
        await write_all(store, [document(f"d{i}", s, vectors[i]) for i, s in enumerate(initial)])
        if any(now.values()):
            await store.build_vector_index(NS)
        for i in sorted(history.deleted):
            await store.delete_document(NS, f"d{i}")
            now.pop(f"d{i}")
        for i, scopes in sorted(history.narrowed.items()):
            if f"d{i}" in now:  # a scope-only write may narrow a document's scopes
                narrowed = now[f"d{i}"] & scopes
                await write_all(store, [document(f"d{i}", narrowed, vectors[i])])
                now[f"d{i}"] = narrowed
        base = len(initial)
        writes = [document(f"n{j}", s, vectors[base + j]) for j, s in enumerate(added)]
        if writes:
            await write_all(store, writes)
        now.update({f"n{j}": s for j, s in enumerate(added)})
        for scopes in history.principals:
            visible = {key for key, held in now.items() if held & scopes}
            query = unit_rows(rng, 1, 8)[0]
            found = {doc_of(chunk) for chunk, _ in await search(store, query, scopes, 50)}
            assert found <= visible
            assert found == visible  # small: every visible chunk fits in the 50
    finally:
        await store.close()


# --- deletes, re-scopes, reused row ids: the index can serve none of them ---------------
def _scopes_of(i: int) -> frozenset[str]:
    """ "a" or "b" by parity; every tenth document also "c"."""
    return frozenset({SCOPES[i % 2], "c"} if i % 10 == 0 else {SCOPES[i % 2]})


async def _store_with(path: Path, n: int, dim: int, seed: int) -> tuple[SqliteGraphStore, F32]:
    rng = np.random.default_rng(seed)
    vectors = unit_rows(rng, n, dim)
    store = SqliteGraphStore(path, ann=EVERY_SEARCH)
    await store.open()
    await write_all(store, [document(f"d{i}", _scopes_of(i), vectors[i]) for i in range(n)])
    await store.build_vector_index(NS)
    return store, vectors


def test_a_deleted_document_is_never_served_by_the_index_built_before_it_went(
    tmp_path: Path,
) -> None:
    async def run() -> None:
        store, vectors = await _store_with(tmp_path / "s.sqlite", 200, 16, 1)
        try:
            (before, _), *_ = await search(store, vectors[10], frozenset({"a"}), 5)
            assert doc_of(before) == "d10"
            await store.delete_document(NS, "d10")
            after = await search(store, vectors[10], frozenset({"a", "b"}), 200)
            assert "d10" not in {doc_of(c) for c, _ in after}
            assert len(after) == 199
        finally:
            await store.close()

    asyncio.run(run())


def test_a_rescoped_document_is_served_only_to_its_new_scopes(tmp_path: Path) -> None:
    async def run() -> None:
        store, vectors = await _store_with(tmp_path / "s.sqlite", 200, 16, 2)
        try:
            (top, _), *_ = await search(store, vectors[10], frozenset({"a"}), 1)
            assert doc_of(top) == "d10"  # d10 holds a and c
            await write_all(store, [document("d10", frozenset({"c"}), vectors[10])])
            old_scope = await search(store, vectors[10], frozenset({"a"}), 100)
            assert "d10" not in {doc_of(c) for c, _ in old_scope}
            (top, score), *_ = await search(store, vectors[10], frozenset({"c"}), 5)
            assert (doc_of(top), round(score, 5)) == ("d10", 1.0)
        finally:
            await store.close()

    asyncio.run(run())


def test_a_reused_row_id_is_searched_by_its_new_vector(tmp_path: Path) -> None:
    """Deleting the newest chunk lets SQLite hand its row id to the next one: the index
    must drop the old vector and hold the new one under that id."""

    async def run() -> None:
        store, vectors = await _store_with(tmp_path / "s.sqlite", 200, 16, 3)
        try:
            await store.delete_document(NS, "d199")
            fresh = unit_rows(np.random.default_rng(99), 1, 16)[0]
            await write_all(store, [document("new", frozenset({"b"}), fresh)])
            (top, score), *_ = await search(store, fresh, frozenset({"b"}), 1)
            assert (doc_of(top), round(score, 5)) == ("new", 1.0)
            old = await search(store, vectors[199], frozenset({"a", "b"}), 200)
            assert "d199" not in {doc_of(c) for c, _ in old}
        finally:
            await store.close()

    asyncio.run(run())


def test_appended_chunks_are_found_without_a_rebuild(tmp_path: Path) -> None:
    async def run() -> None:
        store, _ = await _store_with(tmp_path / "s.sqlite", 200, 16, 4)
        try:
            fresh = unit_rows(np.random.default_rng(7), 3, 16)
            await write_all(
                store, [document(f"x{j}", frozenset({"a"}), fresh[j]) for j in range(3)]
            )
            for j in range(3):
                (top, _), *_ = await search(store, fresh[j], frozenset({"a"}), 1)
                assert doc_of(top) == f"x{j}"
        finally:
            await store.close()

    asyncio.run(run())


# --- recall against the exact scan ------------------------------------------------------
def _recall(ann: list[list[str]], exact: list[list[str]]) -> float:
    hit = sum(len(set(a) & set(e)) for a, e in zip(ann, exact, strict=True))
    return hit / sum(len(e) for e in exact)


def test_recall_against_the_exact_scan_at_small_scale(tmp_path: Path) -> None:
    """4,000 chunks in 4 scopes (60 IVF lists): probing 16 lists finds >= 90% of the exact
    top 10 and top 50 for 1-2-scope callers; probing all of them finds all of it."""

    async def run() -> tuple[dict[int, float], dict[int, float]]:
        rng = np.random.default_rng(5)
        n, dim = 4_000, 32
        centres = unit_rows(rng, 40, dim)  # clustered, as embeddings are
        vectors = centres[rng.integers(0, 40, n)] + 0.35 * unit_rows(rng, n, dim)
        vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        path = tmp_path / "s.sqlite"
        exact = SqliteGraphStore(path)
        await exact.open()
        await write_all(
            exact,
            [document(f"d{i}", frozenset({SCOPES[i % 4]}), vectors[i]) for i in range(n)],
        )
        probed = SqliteGraphStore(path, ann=AnnSettings(min_visible_rows=1, nprobe=16))
        every = SqliteGraphStore(path, ann=EVERY_SEARCH)
        partial: dict[int, float] = {}
        full: dict[int, float] = {}
        try:
            for store in (probed, every):
                await store.open()
                await store.build_vector_index(NS)
            queries = vectors[rng.integers(0, n, 40)] + 0.1 * unit_rows(rng, 40, dim)
            callers = [
                frozenset(rng.choice(SCOPES, size=1 + i % 2, replace=False)) for i in range(40)
            ]
            for k in (10, 50):
                truth, approx, whole = [], [], []
                for q, scopes in zip(queries.astype(np.float32), callers, strict=True):
                    truth.append([c for c, _ in await search(exact, q, scopes, k)])
                    approx.append([c for c, _ in await search(probed, q, scopes, k)])
                    whole.append([c for c, _ in await search(every, q, scopes, k)])
                partial[k] = _recall(approx, truth)
                full[k] = _recall(whole, truth)
        finally:
            for store in (exact, probed, every):
                await store.close()
        return partial, full

    partial, full = asyncio.run(run())
    assert min(partial.values()) >= 0.9, partial
    assert full == {10: 1.0, 50: 1.0}


def test_below_the_visible_row_threshold_the_exact_scan_answers(tmp_path: Path) -> None:
    """A store with ann= but a small namespace builds nothing and ranks as the exact scan."""

    async def run() -> None:
        rng = np.random.default_rng(6)
        vectors = unit_rows(rng, 100, 16)
        path = tmp_path / "s.sqlite"
        ann = SqliteGraphStore(path, ann=AnnSettings(min_visible_rows=1_000))
        await ann.open()
        await write_all(ann, [document(f"d{i}", frozenset({"a"}), vectors[i]) for i in range(100)])
        exact = SqliteGraphStore(path)
        await exact.open()
        try:
            for q in vectors[:10]:
                assert await search(ann, q, frozenset({"a"}), 10) == await search(
                    exact, q, frozenset({"a"}), 10
                )
        finally:
            await ann.close()
            await exact.close()

    asyncio.run(run())
