"""Query names as walk seeds: one name, one referent's worth of mass; longest match wins."""

from __future__ import annotations

from graphctx.contract import NodeKind
from graphctx.retrieve.expansion import seed_shares
from graphctx.retrieve.graph_ranking import seeds_by_name
from graphctx.store.records import EntityMatch, Expansion, PathStep


def match(node_id: str, key: str) -> EntityMatch:
    return EntityMatch(node_id, NodeKind.ENTITY, None, key, 1)


def home(seed: str, chunk_id: str) -> Expansion:
    path = (PathStep(NodeKind.ENTITY, seed), PathStep(NodeKind.CHUNK, chunk_id, "<-SUPPORTS"))
    return Expansion(chunk_id, 0, 1.0, path, 1)


def test_a_name_inside_a_longer_matched_name_is_no_seed() -> None:
    seeds, namesakes = seeds_by_name(
        [match("doc:johnnycake", "johnnycake west virginia"), match("doc:virginia", "virginia")]
    )
    assert (seeds, namesakes) == (["doc:johnnycake"], [])


def test_every_referent_of_a_kept_name_is_walked_past_the_name_limit() -> None:
    namibias = [match(f"doc:namibia-{i}", "namibia") for i in range(6)]
    seeds, namesakes = seeds_by_name([*namibias, match("doc:blankaart", "steven blankaart")])
    assert seeds == ["doc:blankaart", *(m.node_id for m in namibias)]
    assert namesakes == [tuple(m.node_id for m in namibias)]


def test_a_shared_name_splits_its_mass_by_what_search_found_of_each_referent() -> None:
    expansions = [home("n1", "c1"), home("n2", "c2"), home("n3", "c3"), home("solo", "c4")]
    shares = seed_shares(expansions, {"c1": 0.6, "c2": 0.2, "c4": 0.1}, [("n1", "n2", "n3")])
    assert {k: round(v, 9) for k, v in shares.items()} == {"n1": 0.75, "n2": 0.25, "n3": 0.0}


def test_a_shared_name_search_found_nothing_of_splits_its_mass_equally() -> None:
    shares = seed_shares([home("n1", "c1"), home("n2", "c2")], {}, [("n1", "n2")])
    assert shares == {"n1": 0.5, "n2": 0.5}
