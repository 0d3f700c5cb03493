from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphctx.contract import NodeKind
from graphctx.retrieve.entities import order_matches, query_keys
from graphctx.store.records import EntityMatch
from graphctx.text.names import name_key


def test_korean_particles_are_stripped_from_the_last_word() -> None:
    keys = query_keys("물류서버-A에 연결된 시스템은?")
    assert "물류서버-a" in keys
    assert "시스템" in keys


def test_multi_word_names_match_across_punctuation() -> None:
    assert "maurice prince of orange" in query_keys("Who was Maurice, Prince of Orange?")


def test_possessives_and_case_do_not_matter() -> None:
    assert "payment-service" in query_keys("What are Payment-Service's dependencies?")


def test_single_stop_words_are_not_keys() -> None:
    assert {"what", "the", "is"}.isdisjoint(query_keys("What is the plan"))


@given(st.text(max_size=200))
def test_every_key_is_a_normalised_name(query: str) -> None:
    for key in query_keys(query):
        assert name_key(key) == key
        assert len(key) >= 2


def match(node_id: str, node_type: str | None, key: str, relations: int) -> EntityMatch:
    return EntityMatch(node_id, NodeKind.ENTITY, node_type, key, relations)


def test_configured_types_come_first_then_longer_names() -> None:
    ordered = order_matches(
        [
            match("p", "Person", "kim", 3),
            match("svc", "Service", "payment", 1),
            match("sys", "System", "payment", 1),
            match("svc2", "Service", "payment gateway", 1),
            match("other", None, "payment", 9),
        ]
    )
    assert [m.node_id for m in ordered] == ["sys", "svc2", "svc", "p", "other"]
