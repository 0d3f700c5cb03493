"""Stale evidence is presented after every current one (README, "Design notes: Pipeline").

Through the packer the retrieval tail uses, with the tail's own evidence type: the fused order
is the ``rank``; the packer selects on it and presents every stale item after the rest.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context import PackingPolicy, default_token_counter, pack_to_budget
from graphctx.contract import Freshness
from graphctx.retrieve.assemble import RankedEvidence
from graphctx.retrieve.fusion import FusedCandidate
from graphctx.store.records import ChunkView, DocumentDates

COUNTER = default_token_counter()
ROOMY = 100_000


def ranked(index: int, freshness: Freshness, superseded_by: str | None = None) -> RankedEvidence:
    text = f"Evidence number {index} about item {index}."
    view = ChunkView(
        chunk_id=f"c{index}",
        document_id=f"d{index}",
        document_version="1",
        source_uri=f"x://d{index}",
        title=None,
        text=text,
        start_char=0,
        end_char=len(text),
        ordinal=0,
        scopes=frozenset({"e"}),
        dates=DocumentDates(),
        superseded=freshness is Freshness.STALE,
        superseded_by=superseded_by,
    )
    candidate = FusedCandidate(f"c{index}", 1.0 / (60 + index), {}, {})
    return RankedEvidence(view, candidate, freshness, rank=index)


def presented(items: list[RankedEvidence]) -> list[RankedEvidence]:
    policy = PackingPolicy(max_blocks=len(items) or 1, max_blocks_per_document=1)
    return [b.evidence for b in pack_to_budget(items, ROOMY, COUNTER, policy).blocks]


def test_a_top_ranked_expired_item_goes_after_ten_current_ones() -> None:
    items = [ranked(0, Freshness.STALE)] + [ranked(i, Freshness.CURRENT) for i in range(1, 11)]
    order = [r.view.chunk_id for r in presented(items)]
    assert order == [f"c{i}" for i in range(1, 11)] + ["c0"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list(Freshness)), max_size=30))
def test_every_stale_item_follows_every_other_and_each_group_keeps_its_order(
    freshness: list[Freshness],
) -> None:
    items = [ranked(i, f) for i, f in enumerate(freshness)]
    result = presented(items)
    kinds = [r.freshness is Freshness.STALE for r in result]
    assert kinds == sorted(kinds)  # no stale item before one that is not stale
    assert sorted(r.view.chunk_id for r in result) == sorted(r.view.chunk_id for r in items)
    for stale in (False, True):
        group = [r for r in result if (r.freshness is Freshness.STALE) is stale]
        assert group == [r for r in items if (r.freshness is Freshness.STALE) is stale]
