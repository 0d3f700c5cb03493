"""The human ``search`` output says when a stage timed out or failed: the bundle is partial
and the reader sees which stage is missing, not only a vanished score column. Faults are
injected on the real SQLite store (FaultyStore), asked through a real ContextProvider."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode
from graphctx.provider import ContextProvider
from graphctx.terminal import render_bundle
from graphctx.testing.faulty_store import Fault, FaultKind, FaultPlan, FaultyStore

HANG_S = 30.0

RUNBOOK = """---
document_id: runbook-payments
scopes: [eng]
---
# Payment gateway restart

Drain traffic from the payment gateway before restarting it, then watch the error rate.
"""


@pytest.fixture
def corpus(provider: ContextProvider, tmp_path: Path) -> ContextProvider:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "runbook.md").write_text(RUNBOOK, encoding="utf-8")
    assert not provider.ingest_path(root, namespace="acme").errors
    return provider


def ask(corpus: ContextProvider, plan: dict[str, Fault], timeout_ms: int) -> ContextResponse:
    store = FaultyStore(corpus.store, FaultPlan(plan))
    provider = ContextProvider(store, corpus.embedder, corpus.token_counter, corpus.grants)
    request = ContextRequest(
        query="how do I restart the payment gateway",
        principal_id="sam",
        allowed_scopes=["eng"],
        namespace="acme",
        timeout_ms=timeout_ms,
        retrieval_mode=RetrievalMode.HYBRID,
    )
    try:
        return provider.retrieve(request)
    finally:
        store.release()
        provider.close()


def partial_lines(response: ContextResponse) -> list[str]:
    return [line for line in render_bundle(response).splitlines() if line.startswith("partial:")]


def test_a_timed_out_vector_stage_is_named_above_the_full_text_items(
    corpus: ContextProvider,
) -> None:
    response = ask(corpus, {"vector_search": Fault(FaultKind.STALL_ASYNC, HANG_S)}, 1500)
    vector = next(s for s in response.manifest.stages if s.stage == "candidates.vector")
    assert response.manifest.partial
    assert response.items
    assert partial_lines(response) == [
        f"partial: candidates.vector timed out after {vector.elapsed_ms} of its"
        f" {vector.budget_ms} ms (ran out of its deadline slice during store query);"
        " the items are what the other stages found"
    ]
    assert "[S1]" in render_bundle(response)  # the partial results are still shown


def test_a_failed_full_text_stage_is_named_with_its_reason(corpus: ContextProvider) -> None:
    response = ask(corpus, {"fulltext_search": Fault(FaultKind.FAIL)}, 2000)
    assert partial_lines(response) == [
        "partial: candidates.fulltext failed (store_unavailable);"
        " the items are what the other stages found"
    ]


def test_a_complete_bundle_has_no_partial_line(corpus: ContextProvider) -> None:
    response = ask(corpus, {}, 3000)
    assert not response.manifest.partial
    assert partial_lines(response) == []
