"""The batch-write half of the GraphStore conformance suite (issue 17, ingest).

Mix it into a GraphStoreConformance subclass, like the other halves::

    class TestMyStore(GraphStoreConformance, BatchWriteConformance):
        @pytest.fixture
        def store(self, runner): ...

* ``write_documents`` leaves exactly what ``write_document`` on each document in turn leaves:
  the same results, versions, chunk ids, views, search scores and order.
* A document a rule refuses writes nothing and the rest of the batch lands; any other failure
  (a chunk that does not match its span, another embedder) writes nothing of the batch.
* ``latest_versions`` reads, for many ids at once, what ``latest_version`` reads for each.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.errors import EmbedderMismatchError, InvalidDocumentError
from graphctx.store.port import GraphStore
from graphctx.store.records import (
    DocumentWrite,
    Expectation,
    NewChunk,
    NewDocument,
    WriteResult,
)
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs, unit_vector

SCOPES = ("eng", "hr", "ops")
IDS = ("a", "b", "c")
TEXTS = ("kafka lag alarm", "kafka lag alarm\n\nrunbook restart", "kafka billing notes")
# (document id, text, scopes, expectation): "none", or "before" (compare-and-set against the
# state before the batch: it holds for an id's first write and is stale after one landed).
_write = st.tuples(
    st.sampled_from(IDS),
    st.sampled_from(TEXTS),
    st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=2),
    st.sampled_from(["none", "before"]),
)
Outcome = tuple[str, Any]


def _document(namespace: str, document_id: str, text: str, scopes: frozenset[str]) -> NewDocument:
    document = make_document(namespace, document_id, text, set(scopes), title=f"T {document_id}")
    return replace(
        document, source_uri=f"test://batch/{document_id}"
    )  # the same in every namespace


def _outcome(result: WriteResult | InvalidDocumentError) -> Outcome:
    if isinstance(result, InvalidDocumentError):
        return ("refused", result.code)
    return ("written", result)


class BatchWriteConformance:
    """``write_documents``: one transaction, the contents of one-by-one writes."""

    def _contents(self, runner: asyncio.Runner, store: GraphStore, namespace: str) -> Any:
        """Everything a reader of ``namespace`` can observe, per scope and unscoped."""
        every = frozenset(SCOPES)
        deadline = far_deadline()

        async def read() -> Any:
            latest = {d: await store.latest_version(namespace, d) for d in IDS}
            assert await store.latest_versions(namespace, [*IDS, "missing", *IDS]) == {
                d: version for d, version in latest.items() if version is not None
            }
            chunks = {d: await store.document_chunks(namespace, d) for d in IDS}
            ids = [f"{d}@{seq}#{n}" for d in IDS for seq in range(1, 8) for n in range(3)]
            per_scope = {}
            for scope in SCOPES:
                scopes = frozenset({scope})
                per_scope[scope] = (
                    await store.list_documents(namespace, scopes),
                    await store.fetch_chunks(namespace, ids, scopes, deadline),
                    [
                        (h.chunk_id, round(h.score, 5))
                        for h in await store.fulltext_search(
                            namespace, "kafka restart", scopes, 20, deadline
                        )
                    ],
                    [
                        (h.chunk_id, round(h.score, 5))
                        for h in await store.vector_search(
                            namespace, unit_vector("kafka lag alarm"), scopes, 20, deadline
                        )
                    ],
                )
            listed = await store.list_documents(namespace, every)
            return latest, chunks, per_scope, listed, await store.namespace_embedder(namespace)

        return runner.run(read())

    def _writes(
        self,
        runner: asyncio.Runner,
        store: GraphStore,
        namespace: str,
        plan: Sequence[tuple[str, str, frozenset[str], str]],
    ) -> list[DocumentWrite]:
        """The plan's writes into ``namespace``, expectations read from it first."""
        before = {d: runner.run(store.latest_version(namespace, d)) for d in IDS}
        writes = []
        for document_id, text, scopes, expect in plan:
            document = _document(namespace, document_id, text, scopes)
            expected = None
            if expect == "before":
                expected = Expectation(before[document_id])
            writes.append(DocumentWrite(document, tuple(paragraphs(text)), expected))
        return writes

    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.differing_executors,
        ],
    )
    @given(
        seed=st.lists(_write, max_size=3),
        plan=st.lists(_write, min_size=1, max_size=6),
    )
    def test_a_batch_write_leaves_exactly_what_one_by_one_writes_leave(
        self,
        runner: asyncio.Runner,
        store: GraphStore,
        seed: list[tuple[str, str, frozenset[str], str]],
        plan: list[tuple[str, str, frozenset[str], str]],
    ) -> None:
        batched, single = ("b" + uuid.uuid4().hex[:12], "o" + uuid.uuid4().hex[:12])
        for namespace in (batched, single):
            for document_id, text, scopes, _ in seed:
                document = _document(namespace, document_id, text, scopes)
                with contextlib.suppress(InvalidDocumentError):  # a refused seed writes nothing
                    runner.run(store.write_document(document, paragraphs(text), "t"))
        one_by_one: list[Outcome] = []
        for write in self._writes(runner, store, single, plan):
            try:
                result = runner.run(
                    store.write_document(write.document, write.chunks, "t", expected=write.expected)
                )
            except InvalidDocumentError as exc:
                one_by_one.append(("refused", exc.code))
            else:
                one_by_one.append(("written", result))
        batch = self._writes(runner, store, batched, plan)
        in_one = [_outcome(r) for r in runner.run(store.write_documents(batched, batch, "t"))]
        assert in_one == one_by_one
        assert self._contents(runner, store, batched) == self._contents(runner, store, single)

    def test_a_refused_document_writes_nothing_and_the_rest_of_the_batch_lands(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        secret = _document(namespace, "b", "kafka unredacted salary", frozenset({"hr"}))
        runner.run(store.write_document(secret, paragraphs(secret.text), "t"))
        wider = _document(namespace, "b", "kafka redacted", frozenset({"hr", "eng"}))
        first = _document(namespace, "a", "kafka lag alarm", frozenset({"eng"}))
        last = _document(namespace, "c", "kafka billing notes", frozenset({"eng"}))
        batch = [DocumentWrite(doc, tuple(paragraphs(doc.text))) for doc in (first, wider, last)]
        results = runner.run(store.write_documents(namespace, batch, "t"))
        assert [_outcome(r)[0] for r in results] == ["written", "refused", "written"]
        assert _outcome(results[1]) == ("refused", "scope_widening_refused")
        eng = runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 10, far_deadline())
        )
        assert sorted(h.chunk_id for h in eng) == ["a@1#0", "c@1#0"]
        latest = runner.run(store.latest_version(namespace, "b"))
        assert latest is not None
        assert (latest.version_seq, latest.scopes) == (1, frozenset({"hr"}))

    @pytest.mark.parametrize("fault", ["span", "embedder"])
    def test_a_failing_document_writes_nothing_of_its_batch(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str, fault: str
    ) -> None:
        good = _document(namespace, "a", "kafka lag alarm", frozenset({"eng"}))
        bad = _document(namespace, "b", "kafka billing notes", frozenset({"eng"}))
        bad_chunks = (NewChunk(0, 0, 5, "not the text", unit_vector("x")),)
        if fault == "embedder":
            bad_chunks = (NewChunk(0, 0, len(bad.text), bad.text, unit_vector("x", dim=8)),)
        batch = [
            DocumentWrite(good, tuple(paragraphs(good.text))),
            DocumentWrite(bad, bad_chunks),
        ]
        with pytest.raises((ValueError, EmbedderMismatchError)):
            runner.run(store.write_documents(namespace, batch, "t"))
        assert runner.run(store.latest_version(namespace, "a")) is None
        assert runner.run(store.namespace_embedder(namespace)) is None
        assert runner.run(store.list_documents(namespace, frozenset(SCOPES))) == []

    def test_latest_versions_reads_what_latest_version_reads_for_each_id(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        other = namespace + "x"
        for target, document_id, text in (
            (namespace, "a", "kafka lag alarm"),
            (namespace, "a", "kafka lag alarm\n\nrunbook restart"),
            (namespace, "b", "kafka billing notes"),
            (other, "c", "kafka billing notes"),
        ):
            document = _document(target, document_id, text, frozenset({"eng"}))
            runner.run(store.write_document(document, paragraphs(text), "t"))
        each = {d: runner.run(store.latest_version(namespace, d)) for d in ("a", "b")}
        got = runner.run(store.latest_versions(namespace, ["a", "missing", "b", "a", "c"]))
        assert (got, each["a"].version_seq if each["a"] else None) == (each, 2)
        assert runner.run(store.latest_versions(namespace, [])) == {}
