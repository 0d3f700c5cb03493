"""A retrieval that outlives the service's own bound ends as a retryable 503, over a socket.

The provider bounds every stage by ``timeout_ms``, so ``server/service.py`` only waits
``timeout_ms + DEADLINE_GRACE_S`` to catch a pipeline bug. To make the pipeline outrun that bound
on purpose, the grace is made *negative* (the service gives up ``OVERRUN_S`` before the request's
own deadline) while ``FaultyStore`` stalls every read far past the deadline, so the pipeline is
still waiting on its stage timeouts when the service's bound fires.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server import service
from graphctx.server.app import create_app
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.faulty_store import Fault, FaultKind, FaultPlan, FaultyStore
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings
from graphctx_lab.chaos.fault_service import context_body, problem_of

TIMEOUT_MS = 1500
OVERRUN_S = 1.0  # the service's bound fires this long before the pipeline's own deadline
STALL_S = 30.0  # far past the deadline; released when the test ends
STALLED_READS = ("fulltext_search", "vector_search", "lookup_entities", "fetch_chunks")


@pytest.fixture
def stalled_service(
    corpus_store: Path,
    tmp_path: Path,
    api_keys: dict[str, str],
    embedder: UniversalSentenceEncoderEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Harness]:
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(corpus_store, copy)
    inner = SqliteGraphStore(copy)
    stall = Fault(FaultKind.STALL_ASYNC, delay_s=STALL_S)
    faulty = FaultyStore(inner, FaultPlan(dict.fromkeys(STALLED_READS, stall)))
    provider = ContextProvider(faulty, embedder, default_token_counter(), CallerAssertedGrants())
    monkeypatch.setattr(service, "DEADLINE_GRACE_S", -OVERRUN_S)
    asyncio.run(inner.open())  # FaultyStore leaves the real store's lifecycle to its owner
    try:
        with serve_in_thread(create_app(service_settings(api_keys), provider)) as url:
            yield Harness(url=url, keys=api_keys, store=copy)
    finally:
        faulty.release()
        asyncio.run(inner.close())


def test_a_retrieval_past_the_services_bound_is_a_retryable_503_deadline_overrun(
    stalled_service: Harness,
) -> None:
    with stalled_service.client("rita") as rita:
        started = time.monotonic()
        response = rita.post("/v1/context", json=context_body(timeout_ms=TIMEOUT_MS))
        waited_s = time.monotonic() - started
    assert problem_of(response) == (503, "deadline_overrun", True), response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert waited_s < TIMEOUT_MS / 1000  # the service's bound ended it, not the pipeline
