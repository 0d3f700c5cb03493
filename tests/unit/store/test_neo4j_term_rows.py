"""The per-term rows ADJUST_TERM_COUNTS writes: one per term, every scope set's delta in it,
and the joining chunks' largest count of the term and shortest length per scope set."""

from __future__ import annotations

from graphctx.store.neo4j.text_statistics import TextDeltas


def test_a_batch_sums_to_one_row_per_term_with_each_scope_sets_delta() -> None:
    deltas = TextDeltas()
    deltas.move("k2", "kafka broker kafka", 1)
    deltas.move("k1", "kafka lag", 1)
    deltas.move("k1", "lag", 1)
    deltas.move("k2", "broker", -1)  # a chunk holding "broker" leaves k2: its delta is 0

    assert deltas.term_rows() == [
        {
            "term": "broker",  # the joining chunk's count and length are still written
            "keys": ["k2"],
            "delta": {"k2": 0},
            "peak": {"k2": 1},
            "shortest": {"k2": 3},
        },
        {
            "term": "kafka",
            "keys": ["k1", "k2"],
            "delta": {"k1": 1, "k2": 1},
            "peak": {"k1": 1, "k2": 2},
            "shortest": {"k1": 2, "k2": 3},
        },
        {
            "term": "lag",
            "keys": ["k1"],
            "delta": {"k1": 2},
            "peak": {"k1": 1},
            "shortest": {"k1": 1},
        },
    ]


def test_a_chunk_leaving_a_set_gives_a_negative_delta_and_no_peak_there() -> None:
    deltas = TextDeltas()
    deltas.move("old", "payment  gateway", -1)
    deltas.move("new", "payment  gateway", 1)

    assert deltas.term_rows() == [
        {
            "term": term,
            "keys": ["new", "old"],
            "delta": {"new": 1, "old": -1},
            "peak": {"new": 1},
            "shortest": {"new": 3},  # "payment", "", "gateway": the BM25 length
        }
        for term in ("gateway", "payment")
    ]


def test_a_version_replacing_a_chunk_of_the_same_terms_still_writes_its_peak() -> None:
    deltas = TextDeltas()
    deltas.move("k", "kafka", -1)
    deltas.move("k", "kafka kafka kafka", 1)

    assert deltas.term_rows() == [
        {"term": "kafka", "keys": ["k"], "delta": {"k": 0}, "peak": {"k": 3}, "shortest": {"k": 3}}
    ]
