from __future__ import annotations

from graphctx.contract import RetrieverName
from graphctx.retrieve.expansion import anchors_from
from graphctx.retrieve.fusion import fuse_rrf, fuse_with_graph
from graphctx.store.records import ChunkHit

FT, VEC, GRAPH = RetrieverName.FULLTEXT, RetrieverName.VECTOR, RetrieverName.GRAPH


def hits(*pairs: tuple[str, float]) -> list[ChunkHit]:
    return [ChunkHit(cid, score) for cid, score in pairs]


RANKED = {
    FT: hits(("a", 9.0), ("b", 5.0), ("c", 1e-6)),
    VEC: hits(("a", 0.5), ("c", 0.49), ("b", 0.1), ("d", 0.05)),
}


def test_a_chunk_matching_one_common_word_is_not_an_anchor() -> None:
    ranked = {FT: hits(("a", 1.08), ("b", 1e-6)), VEC: hits(("a", 0.46), ("c", 0.07), ("b", 0.002))}
    assert anchors_from(fuse_rrf(ranked)) == {"a": 1.0}


def test_anchors_are_weighted_by_their_best_share_of_a_retrievers_top_score() -> None:
    anchors = anchors_from(fuse_rrf(RANKED))
    assert anchors == {"a": 1.0, "c": 0.98}


def test_the_top_anchor_is_never_outranked_by_a_graph_neighbour() -> None:
    fused = fuse_with_graph(RANKED, hits(("c", 1.0), ("d", 1.0)), ["a", "c"])
    assert [c.chunk_id for c in fused][:1] == ["a"]
    assert {c.chunk_id for c in fused} == {"a", "b", "c", "d"}


def test_a_graph_only_chunk_joins_with_its_graph_score_and_rank() -> None:
    fused = {c.chunk_id: c for c in fuse_with_graph(RANKED, hits(("e", 0.6)), ["a"])}
    assert fused["e"].scores == {GRAPH: 0.6}
    assert fused["e"].ranks == {GRAPH: 1}
    assert fused["e"].fused == 0.6 / 61


def test_a_named_entitys_chunk_outweighs_a_weak_neighbour() -> None:
    fused = fuse_with_graph(RANKED, hits(("x", 1.0), ("y", 0.2)), ["a"])
    order = [c.chunk_id for c in fused]
    assert order.index("x") < order.index("y")


def test_without_graph_hits_the_ranking_is_plain_rrf() -> None:
    assert fuse_with_graph(RANKED, [], ["a"], pinned=0) == fuse_rrf(RANKED)
