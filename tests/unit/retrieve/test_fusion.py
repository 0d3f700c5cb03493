from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphctx.contract import RetrieverName
from graphctx.retrieve.fusion import AGREEMENT_DEPTH, fuse_lists
from graphctx.store.records import ChunkHit

FT, VEC = RetrieverName.FULLTEXT, RetrieverName.VECTOR
ids = st.lists(st.sampled_from([f"c{i}" for i in range(30)]), unique=True, max_size=20)


def hits(chunk_ids: list[str], top: float = 1.0) -> list[ChunkHit]:
    return [ChunkHit(cid, top / (n + 1)) for n, cid in enumerate(chunk_ids)]


def order(ranked: dict[RetrieverName, list[ChunkHit]]) -> list[str]:
    return [c.chunk_id for c in fuse_lists(ranked).candidates]


def test_agreeing_evidence_lifts_a_chunk_above_an_equally_strong_lexical_hit() -> None:
    ft = [ChunkHit("a", 10.0), ChunkHit("both", 9.9), *hits([f"f{i}" for i in range(8)])]
    vec = [ChunkHit("both", 0.9), *hits([f"f{i}" for i in range(8)], top=0.5)]
    fused = fuse_lists({FT: ft, VEC: vec})
    assert fused.candidates[0].chunk_id == "both"
    assert dict(fused.candidates[0].ranks) == {FT: 2, VEC: 1}


def test_a_list_sharing_nothing_with_the_full_text_top_has_no_say() -> None:
    ft = hits([f"f{i}" for i in range(12)], top=20.0)
    vec = hits([f"v{i}" for i in range(12)], top=0.9)
    fused = fuse_lists({FT: ft, VEC: vec})
    assert order({FT: ft, VEC: vec})[:12] == [f"f{i}" for i in range(12)]
    assert {w.retriever: w.weight for w in fused.weights} == {FT: 1.0, VEC: 0.0}
    assert "0/10" in fused.explain()


def test_agreement_sets_the_second_lists_weight() -> None:
    shared = [f"s{i}" for i in range(4)]
    ft = hits([*shared, *(f"f{i}" for i in range(6))])
    vec = hits([*reversed(shared), *(f"v{i}" for i in range(6))])
    weights = {w.retriever: w for w in fuse_lists({FT: ft, VEC: vec}).weights}
    assert weights[VEC].agreement == 4
    assert weights[VEC].weight == 4 / AGREEMENT_DEPTH
    assert weights[FT].agreement is None


def test_without_full_text_hits_the_vector_list_is_the_reference() -> None:
    vec = hits(["v1", "v2", "v3"])
    fused = fuse_lists({FT: [], VEC: vec})
    assert [c.chunk_id for c in fused.candidates] == ["v1", "v2", "v3"]
    assert fused.weights[0].retriever is VEC
    assert fused.weights[0].agreement is None


def test_no_lists_fuse_to_nothing() -> None:
    assert fuse_lists({}).candidates == []


@given(ids, ids)
def test_fusion_is_deterministic_whatever_the_input_mapping_order(
    a: list[str], b: list[str]
) -> None:
    one = fuse_lists({FT: hits(a), VEC: hits(b)})
    two = fuse_lists({VEC: hits(b), FT: hits(a)})
    assert one == two
    assert sorted(c.chunk_id for c in one.candidates) == sorted(set(a) | set(b))
    scores = [c.fused for c in one.candidates]
    assert scores == sorted(scores, reverse=True)


@given(ids, ids)
def test_the_full_text_order_survives_among_full_text_hits(a: list[str], b: list[str]) -> None:
    """The reference list's own ranking is never reordered by a list it does not agree with
    at the top; whatever the other list does, chunks only the reference found keep its order."""
    fused = order({FT: hits(a), VEC: hits(b)})
    only_ft = [c for c in fused if c in a and c not in b]
    assert only_ft == [c for c in a if c not in b]
