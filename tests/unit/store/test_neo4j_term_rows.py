"""The per-term rows ADJUST_TERM_COUNTS writes: one per term, every scope set's delta in it."""

from __future__ import annotations

from graphctx.store.neo4j.text_statistics import TextDeltas


def test_a_batch_sums_to_one_row_per_term_with_each_scope_sets_delta() -> None:
    deltas = TextDeltas()
    deltas.move("k2", "kafka broker kafka", 1)
    deltas.move("k1", "kafka lag", 1)
    deltas.move("k1", "lag", 1)
    deltas.move("k2", "broker", -1)  # a chunk holding "broker" leaves k2: its delta is 0

    assert deltas.term_rows() == [
        {"term": "kafka", "keys": ["k1", "k2"], "delta": {"k1": 1, "k2": 1}},
        {"term": "lag", "keys": ["k1"], "delta": {"k1": 2}},
    ]


def test_a_chunk_leaving_a_set_gives_a_negative_delta_and_empty_terms_no_row() -> None:
    deltas = TextDeltas()
    deltas.move("old", "payment  gateway", -1)
    deltas.move("new", "payment  gateway", 1)

    assert deltas.term_rows() == [
        {"term": "gateway", "keys": ["new", "old"], "delta": {"new": 1, "old": -1}},
        {"term": "payment", "keys": ["new", "old"], "delta": {"new": 1, "old": -1}},
    ]
