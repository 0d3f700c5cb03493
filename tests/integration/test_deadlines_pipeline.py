"""Deadlines and failures of every pipeline stage, injected on the real SQLite store.

Each test wraps the opened store in a FaultyStore (a stall in a worker thread or an await, or
the store's own typed error) and asks through a real ContextProvider.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    RetrievalMode,
    StageStatus,
    UnanswerableReason,
)
from graphctx.errors import StoreUnavailableError
from graphctx.provider import ContextProvider
from graphctx.testing.faulty_store import Fault, FaultKind, FaultPlan, FaultyStore

OVERRUN_BOUND_MS = 250  # the chaos scenario's bound (graphctx_lab.chaos.deadlines)
HANG_S = 30.0  # far beyond every deadline here; released when the test ends

RUNBOOK = """---
document_id: runbook-payments
title: Payment gateway restart
scopes: [eng]
updated_at: 2026-06-01
---
# Payment gateway restart

Drain traffic from the payment gateway before restarting it. Then run
`kubectl rollout restart deploy/payment-gateway` and watch the error rate for ten minutes.
"""

NOTES = """---
document_id: gateway-notes
title: Payment gateway notes
scopes: [eng]
updated_at: 2026-05-01
---
The payment gateway keeps a connection pool of 200 connections to the card processor.
"""


@pytest.fixture
def corpus(provider: ContextProvider, tmp_path: Path) -> ContextProvider:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "runbook.md").write_text(RUNBOOK, encoding="utf-8")
    (root / "notes.md").write_text(NOTES, encoding="utf-8")
    report = provider.ingest_path(root, namespace="acme")
    assert not report.errors
    return provider


@pytest.fixture
def faulty(corpus: ContextProvider) -> Iterator[tuple[ContextProvider, list[FaultyStore]]]:
    """The ingested provider and the faulty stores a test made; their stalls end with it."""
    stores: list[FaultyStore] = []
    yield corpus, stores
    for store in stores:
        store.release()


def ask(
    corpus: ContextProvider,
    stores: list[FaultyStore],
    plan: dict[str, Fault],
    *,
    timeout_ms: int,
    mode: RetrievalMode = RetrievalMode.HYBRID,
) -> tuple[ContextResponse, float]:
    store = FaultyStore(corpus.store, FaultPlan(plan))
    stores.append(store)
    provider = ContextProvider(store, corpus.embedder, corpus.token_counter, corpus.grants)
    request = ContextRequest(
        query="how do I restart the payment gateway",
        principal_id="sam",
        allowed_scopes=["eng"],
        namespace="acme",
        timeout_ms=timeout_ms,
        retrieval_mode=mode,
    )
    started = time.monotonic()
    try:
        response = provider.retrieve(request)
    finally:
        elapsed_ms = (time.monotonic() - started) * 1000
        store.release()
        provider.close()
    return response, elapsed_ms


def status_of(response: ContextResponse) -> dict[str, StageStatus]:
    return {s.stage: s.status for s in response.manifest.stages}


def test_a_fetch_stuck_in_a_worker_thread_is_abandoned_at_the_deadline(
    faulty: tuple[ContextProvider, list[FaultyStore]],
) -> None:
    corpus, stores = faulty
    plan = {"fetch_chunks": Fault(FaultKind.STALL_THREAD, HANG_S)}
    response, elapsed_ms = ask(corpus, stores, plan, timeout_ms=600)
    assert elapsed_ms <= 600 + OVERRUN_BOUND_MS
    assert response.reason is UnanswerableReason.DEADLINE_EXCEEDED
    assert response.manifest.partial is True
    assert response.manifest.deadline_stage == "fetch"


def test_a_hung_output_gate_returns_no_items_and_is_named(
    faulty: tuple[ContextProvider, list[FaultyStore]],
) -> None:
    corpus, stores = faulty
    plan = {"fetch_chunks": Fault(FaultKind.STALL_ASYNC, HANG_S, from_call=2)}
    response, elapsed_ms = ask(corpus, stores, plan, timeout_ms=800)
    assert elapsed_ms <= 800 + OVERRUN_BOUND_MS
    assert response.items == []
    assert response.reason is UnanswerableReason.DEADLINE_EXCEEDED
    assert response.manifest.deadline_stage == "output_gate"
    assert status_of(response)["output_gate"] is StageStatus.TIMED_OUT


def test_a_hung_entity_lookup_is_named_and_the_retrievers_still_answer(
    faulty: tuple[ContextProvider, list[FaultyStore]],
) -> None:
    corpus, stores = faulty
    plan = {"lookup_entities": Fault(FaultKind.STALL_THREAD, HANG_S)}
    response, elapsed_ms = ask(corpus, stores, plan, timeout_ms=1500, mode=RetrievalMode.AUTO)
    assert elapsed_ms <= 1500 + OVERRUN_BOUND_MS
    assert response.answerable
    assert status_of(response)["route.entities"] is StageStatus.TIMED_OUT
    assert response.manifest.deadline_stage == "route.entities"
    assert response.manifest.partial is True


def test_a_hung_query_embedding_names_the_step_that_ran_out(
    faulty: tuple[ContextProvider, list[FaultyStore]], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, stores = faulty
    model_free = threading.Event()

    def stuck_embedding(text: str) -> object:
        model_free.wait(HANG_S)  # a model stuck on a busy CPU ignores every deadline
        raise AssertionError("the request must not have waited for the embedding")

    monkeypatch.setattr(corpus.embedder, "embed_query", stuck_embedding)
    try:
        response, elapsed_ms = ask(corpus, stores, {}, timeout_ms=700)
    finally:
        model_free.set()
    assert elapsed_ms <= 700 + OVERRUN_BOUND_MS
    vector = next(s for s in response.manifest.stages if s.stage == "candidates.vector")
    assert vector.status is StageStatus.TIMED_OUT
    assert vector.detail == "ran out of its deadline slice during query embedding"
    assert response.answerable  # full-text evidence still makes the bundle
    assert all(item.retrieval_scores.vector is None for item in response.items)


def test_a_failed_retriever_leaves_a_partial_bundle_from_the_other(
    faulty: tuple[ContextProvider, list[FaultyStore]],
) -> None:
    corpus, stores = faulty
    response, _ = ask(corpus, stores, {"fulltext_search": Fault(FaultKind.FAIL)}, timeout_ms=2000)
    fulltext = next(s for s in response.manifest.stages if s.stage == "candidates.fulltext")
    assert response.answerable
    assert (fulltext.status, fulltext.detail) == (StageStatus.FAILED, "store_unavailable")
    assert response.manifest.partial is True
    assert response.manifest.deadline_stage is None
    assert all(item.retrieval_scores.fulltext is None for item in response.items)


def test_when_every_retriever_fails_the_retryable_store_error_is_raised(
    faulty: tuple[ContextProvider, list[FaultyStore]],
) -> None:
    corpus, stores = faulty
    plan = {
        "fulltext_search": Fault(FaultKind.FAIL),
        "vector_search": Fault(FaultKind.FAIL),
    }
    with pytest.raises(StoreUnavailableError) as raised:
        ask(corpus, stores, plan, timeout_ms=2000)
    assert raised.value.retryable is True


def test_when_every_retriever_runs_out_of_time_the_bundle_says_so(
    faulty: tuple[ContextProvider, list[FaultyStore]],
) -> None:
    corpus, stores = faulty
    plan = {
        "fulltext_search": Fault(FaultKind.STALL_THREAD, HANG_S),
        "vector_search": Fault(FaultKind.STALL_ASYNC, HANG_S),
    }
    response, elapsed_ms = ask(corpus, stores, plan, timeout_ms=500)
    assert elapsed_ms <= 500 + OVERRUN_BOUND_MS
    assert response.reason is UnanswerableReason.DEADLINE_EXCEEDED
    assert response.manifest.deadline_stage in {"candidates.fulltext", "candidates.vector"}
