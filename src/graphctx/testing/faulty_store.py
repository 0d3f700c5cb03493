"""Fault injection on a real GraphStore: latency and failures per read method.

:class:`FaultyStore` delegates every call to a real, opened store (the embedded SQLite store in
the scenarios) and, for the methods named in its :class:`FaultPlan`, first injects

* ``STALL_THREAD`` — a worker thread blocks, like a read stuck on a slow disk: the event loop
  is free but the thread does not look at any deadline;
* ``STALL_ASYNC`` — the call awaits, like a driver waiting on a slow network;
* ``FAIL`` — the store's own typed error (:class:`StoreUnavailableError`, retryable), as a
  lost connection or a locked file raises it.

Stalls end after their delay or when :meth:`FaultyStore.release` is called (the trial's end),
so blocked worker threads never pile up across trials. Each stall whose delay reaches past
the deadline the caller passed is recorded in :attr:`FaultyStore.overruns`: that call's
stage *must* report ``timed_out``.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from graphctx.errors import InvalidDocumentError, StoreUnavailableError
from graphctx.store.candidate_lists import CandidateSearch, QueryVector
from graphctx.store.candidate_search import compose_candidate_search
from graphctx.store.namespace_embedder import EmbedderRecord
from graphctx.store.port import GraphStore
from graphctx.store.records import (
    ChunkHit,
    ChunkView,
    DocumentSummary,
    DocumentWrite,
    EntityMatch,
    ExpansionPolicy,
    ExpansionResult,
    Expectation,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    NodeText,
    Relation,
    StoredVersion,
    Vector,
    WriteResult,
)

__all__ = ["READ_METHODS", "Fault", "FaultKind", "FaultPlan", "FaultyStore", "random_plan"]

T = TypeVar("T")

# The read methods the retrieval pipeline calls, in pipeline order.
READ_METHODS = (
    "lookup_entities",
    "fulltext_search",
    "vector_search",
    "expand",
    "neighbourhood",
    "fetch_chunks",
)


class FaultKind(StrEnum):
    STALL_THREAD = "stall_thread"
    STALL_ASYNC = "stall_async"
    FAIL = "fail"


@dataclass(frozen=True)
class Fault:
    """One injected fault; ``from_call`` spares the calls before it (the output gate is the
    pipeline's second ``fetch_chunks``)."""

    kind: FaultKind
    delay_s: float = 0.0
    from_call: int = 1


@dataclass(frozen=True)
class FaultPlan:
    """Faults by method name, applied to every call of that method."""

    faults: Mapping[str, Fault] = field(default_factory=dict)

    def describe(self) -> str:
        parts = [f"{m}={f.kind.value}:{f.delay_s * 1000:.0f}ms" for m, f in self.faults.items()]
        return ", ".join(parts) or "no faults"


def random_plan(rng: random.Random, timeout_s: float, methods: Sequence[str]) -> FaultPlan:
    """Each method independently: untouched, a short stall, a stall past the deadline, a hang
    far beyond it (seconds), or a failure — so single and combined faults both occur."""
    faults: dict[str, Fault] = {}
    for method in methods:
        draw = rng.random()
        if draw < 0.45:
            continue
        kind = rng.choice([FaultKind.STALL_THREAD, FaultKind.STALL_ASYNC])
        if draw < 0.65:
            faults[method] = Fault(kind, rng.uniform(0.0, 0.3) * timeout_s)
        elif draw < 0.8:
            faults[method] = Fault(kind, rng.uniform(0.5, 2.0) * timeout_s)
        elif draw < 0.92:
            faults[method] = Fault(kind, timeout_s + rng.uniform(5.0, 30.0))
        else:
            faults[method] = Fault(FaultKind.FAIL, rng.uniform(0.0, 0.2) * timeout_s)
    return FaultPlan(faults)


class FaultyStore:
    """A GraphStore that injects the faults of its plan, then delegates to ``inner``."""

    def __init__(self, inner: GraphStore, plan: FaultPlan) -> None:
        self.inner = inner
        self.plan = plan
        self.name = f"faulty-{inner.name}"
        self.overruns: list[tuple[str, int]] = []  # (method, call number) stalled past deadline
        self.calls: dict[str, int] = {}
        self._released = threading.Event()

    def release(self) -> None:
        """End every stall now (blocked worker threads return at once)."""
        self._released.set()

    async def _inject(self, method: str, deadline: float | None) -> None:
        number = self.calls[method] = self.calls.get(method, 0) + 1
        fault = self.plan.faults.get(method)
        if fault is None or number < fault.from_call:
            return
        stalls = fault.kind is not FaultKind.FAIL
        if stalls and deadline is not None and time.monotonic() + fault.delay_s > deadline:
            self.overruns.append((method, number))
        if fault.kind is FaultKind.STALL_THREAD:
            await asyncio.to_thread(self._released.wait, fault.delay_s)
        elif fault.delay_s > 0:
            await asyncio.sleep(fault.delay_s)
        if fault.kind is FaultKind.FAIL:
            raise StoreUnavailableError(f"injected fault: {method} lost the store")

    async def _faulty(self, method: str, deadline: float | None, call: Awaitable[T]) -> T:
        try:
            await self._inject(method, deadline)
        except BaseException:
            if asyncio.iscoroutine(call):
                call.close()  # never started: do not leave it un-awaited
            raise
        return await call

    # --- lifecycle: the inner store is opened and closed by its owner -----------------------
    async def open(self) -> None:
        return None

    async def close(self) -> None:
        self.release()

    async def ping(self) -> None:
        await self._faulty("ping", None, self.inner.ping())

    # --- write path: delegated unchanged ------------------------------------------------------
    async def latest_version(self, namespace: str, document_id: str) -> StoredVersion | None:
        return await self.inner.latest_version(namespace, document_id)

    async def latest_versions(
        self, namespace: str, document_ids: Sequence[str]
    ) -> dict[str, StoredVersion]:
        return await self.inner.latest_versions(namespace, document_ids)

    async def namespace_embedder(self, namespace: str) -> EmbedderRecord | None:
        return await self.inner.namespace_embedder(namespace)

    async def write_document(
        self,
        document: NewDocument,
        chunks: Sequence[NewChunk],
        embedder_name: str,
        *,
        expected: Expectation | None = None,
    ) -> WriteResult:
        return await self.inner.write_document(document, chunks, embedder_name, expected=expected)

    async def write_documents(
        self, namespace: str, writes: Sequence[DocumentWrite], embedder_name: str
    ) -> list[WriteResult | InvalidDocumentError]:
        return await self.inner.write_documents(namespace, writes, embedder_name)

    async def delete_document(
        self, namespace: str, document_id: str, *, expected: Expectation | None = None
    ) -> int:
        return await self.inner.delete_document(namespace, document_id, expected=expected)

    async def write_graph(
        self, namespace: str, nodes: Sequence[KnowledgeNode], relations: Sequence[Relation]
    ) -> None:
        await self.inner.write_graph(namespace, nodes, relations)

    async def document_chunks(self, namespace: str, document_id: str) -> list[ChunkView]:
        return await self.inner.document_chunks(namespace, document_id)

    # --- read path: faults injected -----------------------------------------------------------
    async def fulltext_search(
        self, namespace: str, query: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        call = self.inner.fulltext_search(namespace, query, scopes, limit, deadline)
        return await self._faulty("fulltext_search", deadline, call)

    async def vector_search(
        self, namespace: str, vector: Vector, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        call = self.inner.vector_search(namespace, vector, scopes, limit, deadline)
        return await self._faulty("vector_search", deadline, call)

    async def search_candidates(
        self,
        namespace: str,
        query: str | None,
        query_vector: QueryVector | None,
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> CandidateSearch:
        """Composed from this store's own searches, so their faults apply."""
        return await compose_candidate_search(
            self, namespace, query, query_vector, scopes, limit, deadline
        )

    async def fetch_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[ChunkView]:
        call = self.inner.fetch_chunks(namespace, chunk_ids, scopes, deadline)
        return await self._faulty("fetch_chunks", deadline, call)

    async def list_documents(self, namespace: str, scopes: frozenset[str]) -> list[DocumentSummary]:
        return await self._faulty(
            "list_documents", None, self.inner.list_documents(namespace, scopes)
        )

    async def nodes_for_chunks(
        self, namespace: str, chunk_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[KnowledgeNode]:
        call = self.inner.nodes_for_chunks(namespace, chunk_ids, scopes, deadline)
        return await self._faulty("nodes_for_chunks", deadline, call)

    async def expand(
        self,
        namespace: str,
        anchors: Mapping[str, float],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        call = self.inner.expand(namespace, anchors, scopes, policy, deadline)
        return await self._faulty("expand", deadline, call)

    async def neighbourhood(
        self,
        namespace: str,
        node_ids: Sequence[str],
        scopes: frozenset[str],
        policy: ExpansionPolicy,
        deadline: float,
    ) -> ExpansionResult:
        call = self.inner.neighbourhood(namespace, node_ids, scopes, policy, deadline)
        return await self._faulty("neighbourhood", deadline, call)

    async def lookup_entities(
        self,
        namespace: str,
        keys: Sequence[str],
        scopes: frozenset[str],
        limit: int,
        deadline: float,
    ) -> list[EntityMatch]:
        call = self.inner.lookup_entities(namespace, keys, scopes, limit, deadline)
        return await self._faulty("lookup_entities", deadline, call)

    async def describe_nodes(
        self, namespace: str, node_ids: Sequence[str], scopes: frozenset[str], deadline: float
    ) -> list[NodeText]:
        call = self.inner.describe_nodes(namespace, node_ids, scopes, deadline)
        return await self._faulty("describe_nodes", deadline, call)
