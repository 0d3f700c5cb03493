"""Waiting for a retrieval slot is bounded by the request's own timeout: a request that cannot
start in time is refused (retryable ``overloaded``) instead of queueing without limit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import StoreUnavailableError
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server.auth import Identity, ProjectGrant, Via
from graphctx.server.config import LimitsConfig
from graphctx.server.metrics import Metrics
from graphctx.server.service import GraphctxService
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.faulty_store import Fault, FaultKind, FaultPlan, FaultyStore

ADA = Identity("ada", "key:ada", Via.API_KEY, {"default": ProjectGrant(frozenset({"eng"}))})


def ask(timeout_ms: int) -> ContextRequest:
    return ContextRequest(
        query="how do we restart the payment gateway",
        principal_id="ada",
        allowed_scopes=["eng"],
        retrieval_mode=RetrievalMode.HYBRID,
        timeout_ms=timeout_ms,
    )


def test_a_request_that_cannot_get_a_slot_within_its_timeout_is_refused_as_retryable(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "runbook.md").write_text("Restart the payment gateway with the runbook.\n", "utf-8")
    inner = SqliteGraphStore(tmp_path / "store.sqlite")
    with ContextProvider(inner, embedder, default_token_counter(), CallerAssertedGrants()) as seed:
        seed.open().ingest_path(docs, scopes=["eng"])
    reopened = SqliteGraphStore(tmp_path / "store.sqlite")
    stalled = FaultyStore(
        reopened,
        FaultPlan({"fulltext_search": Fault(FaultKind.STALL_ASYNC, delay_s=1.2)}),
    )
    provider = ContextProvider(stalled, embedder, default_token_counter(), CallerAssertedGrants())
    service = GraphctxService(provider, LimitsConfig(max_concurrent_retrievals=1), Metrics())

    async def two_requests() -> tuple[StoreUnavailableError, float]:
        await reopened.open()  # the fault wrapper leaves the real store's lifecycle to its owner
        try:
            holder = asyncio.create_task(service.retrieve(ADA, ask(timeout_ms=1500)))
            await asyncio.sleep(0.2)  # the first request holds the only slot (its stall: 1.2 s)
            started = asyncio.get_running_loop().time()
            with pytest.raises(StoreUnavailableError) as refused:
                await service.retrieve(ADA, ask(timeout_ms=100))
            waited = asyncio.get_running_loop().time() - started
            await holder
            return refused.value, waited
        finally:
            stalled.release()
            await reopened.close()

    error, waited_s = asyncio.run(two_requests())
    assert (error.code, error.retryable) == ("overloaded", True)
    assert 0.09 <= waited_s < 0.6
