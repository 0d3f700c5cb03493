from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphctx.contract import RetrieverName
from graphctx.retrieve.fusion import RRF_K, fuse_rrf
from graphctx.store.records import ChunkHit

ids = st.lists(st.sampled_from([f"c{i}" for i in range(12)]), unique=True, max_size=10)


def hits(chunk_ids: list[str]) -> list[ChunkHit]:
    return [ChunkHit(cid, 1.0 / (n + 1)) for n, cid in enumerate(chunk_ids)]


EQUAL = {RetrieverName.FULLTEXT: 1.0, RetrieverName.VECTOR: 1.0}


def test_a_chunk_found_by_both_retrievers_outranks_one_found_by_either() -> None:
    fused = fuse_rrf(
        {
            RetrieverName.FULLTEXT: hits(["a", "both"]),
            RetrieverName.VECTOR: hits(["b", "both"]),
        },
        weights=EQUAL,
    )
    assert fused[0].chunk_id == "both"
    assert fused[0].fused == 2 / (RRF_K + 2)
    assert dict(fused[0].ranks) == {RetrieverName.FULLTEXT: 2, RetrieverName.VECTOR: 2}


@given(ids, ids)
def test_fusion_is_deterministic_whatever_the_input_mapping_order(
    a: list[str], b: list[str]
) -> None:
    one = fuse_rrf({RetrieverName.FULLTEXT: hits(a), RetrieverName.VECTOR: hits(b)})
    two = fuse_rrf({RetrieverName.VECTOR: hits(b), RetrieverName.FULLTEXT: hits(a)})
    assert one == two
    assert sorted(c.chunk_id for c in one) == sorted(set(a) | set(b))
    assert [c.fused for c in one] == sorted((c.fused for c in one), reverse=True)


def test_equal_scores_are_ordered_by_chunk_id() -> None:
    fused = fuse_rrf(
        {RetrieverName.FULLTEXT: hits(["z"]), RetrieverName.VECTOR: hits(["a"])}, weights=EQUAL
    )
    assert [c.chunk_id for c in fused] == ["a", "z"]


def test_a_lighter_retriever_loses_a_tie_of_ranks() -> None:
    fused = fuse_rrf(
        {RetrieverName.FULLTEXT: hits(["z"]), RetrieverName.VECTOR: hits(["a"])},
        weights={RetrieverName.FULLTEXT: 1.0, RetrieverName.VECTOR: 0.5},
    )
    assert [c.chunk_id for c in fused] == ["z", "a"]
    assert fused[1].fused == 0.5 / (RRF_K + 1)
