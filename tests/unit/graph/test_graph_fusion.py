from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from graphctx.contract import RetrieverName
from graphctx.retrieve.expansion import anchors_from
from graphctx.retrieve.fusion import (
    GRAPH_WEIGHT,
    FusedCandidate,
    fuse_lists,
    merge_graph,
    relative_scores,
)
from graphctx.store.records import ChunkHit

FT, VEC, GRAPH = RetrieverName.FULLTEXT, RetrieverName.VECTOR, RetrieverName.GRAPH
DECAY = 0.6  # the default policy's hop decay


def restart_of(fused: list[FusedCandidate]) -> dict[str, float]:
    """The restart shares the graph stage gives the anchors it walks from."""
    return dict.fromkeys(anchors_from(fused), 1.0 - DECAY)


def hits(*pairs: tuple[str, float]) -> list[ChunkHit]:
    return [ChunkHit(cid, score) for cid, score in pairs]


FUSED = fuse_lists(
    {FT: hits(("a", 9.0), ("b", 8.5), ("c", 3.0), ("d", 1.0), ("e", 0.5), ("f", 0.1))}
).candidates


def test_the_best_candidate_is_always_an_anchor_weighted_one() -> None:
    anchors = anchors_from(FUSED)
    assert anchors["a"] == 1.0
    assert set(anchors) == {"a", "b"}  # c..f are under half of the best fused score


def test_a_neighbour_of_one_anchor_never_outranks_that_anchor() -> None:
    relative = relative_scores(FUSED)
    merged = merge_graph(FUSED, {"x": DECAY * relative["a"]}, restart=restart_of(FUSED))
    order = [c.chunk_id for c in merged]
    assert order.index("a") < order.index("x")
    assert order.index("b") < order.index("x")  # nor a search hit almost as strong


def test_support_from_several_anchors_adds_up() -> None:
    relative = relative_scores(FUSED)
    propagated = {"x": DECAY * (relative["a"] + relative["b"])}
    merged = merge_graph(FUSED, propagated, restart=restart_of(FUSED))
    assert merged[0].chunk_id == "x"


def test_a_graph_only_chunk_joins_with_its_propagated_score_and_rank() -> None:
    merged = {c.chunk_id: c for c in merge_graph(FUSED, {"x": 0.3, "y": 0.2})}
    assert merged["x"].scores == {GRAPH: 0.3}
    assert merged["y"].ranks == {GRAPH: 2}
    assert merged["x"].fused == GRAPH_WEIGHT * 0.3


def test_without_graph_scores_the_ranking_is_unchanged() -> None:
    assert [c.chunk_id for c in merge_graph(FUSED, {})] == [c.chunk_id for c in FUSED]


@given(
    st.lists(st.floats(min_value=0.01, max_value=100.0), min_size=2, max_size=12, unique=True),
    st.integers(min_value=0, max_value=11),
)
def test_one_anchors_neighbour_stays_below_it_whatever_the_scores(
    scores: list[float], which: int
) -> None:
    ranked = sorted(scores, reverse=True)
    fused: list[FusedCandidate] = fuse_lists(
        {FT: [ChunkHit(f"c{i}", s) for i, s in enumerate(ranked)]}
    ).candidates
    anchors = list(anchors_from(fused))
    anchor = anchors[which % len(anchors)]
    propagated = {"n": DECAY * relative_scores(fused)[anchor]}
    merged = [c.chunk_id for c in merge_graph(fused, propagated, restart=restart_of(fused))]
    assert merged.index(anchor) < merged.index("n")


def test_a_search_hit_next_to_the_top_anchor_does_not_overtake_the_other_anchor() -> None:
    relative = relative_scores(FUSED)
    propagated = {"c": DECAY * relative["a"]}  # c: a weaker search hit the top anchor reaches
    order = [c.chunk_id for c in merge_graph(FUSED, propagated, restart=restart_of(FUSED))]
    assert order[:3] == ["a", "b", "c"]


def test_an_anchor_keeps_its_restart_share_but_reports_only_what_the_walk_brought() -> None:
    relative = relative_scores(FUSED)
    merged = {c.chunk_id: c for c in merge_graph(FUSED, {}, restart={"b": 1.0 - DECAY})}
    assert math.isclose(merged["b"].fused, relative["b"] * (1.0 + GRAPH_WEIGHT * (1.0 - DECAY)))
    assert GRAPH not in merged["b"].scores
