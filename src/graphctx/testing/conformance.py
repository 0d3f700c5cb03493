"""The GraphStore conformance suite, importable by every backend's tests.

Use it by subclassing and providing two fixtures::

    class TestMyStore(GraphStoreConformance):
        @pytest.fixture
        def store(self, runner): ...   # an opened GraphStore
        # `runner` (an asyncio.Runner) is provided here; override it if you need to.

Each test writes into its own fresh namespace, so backends may share one server. The graph
layer's half is :class:`graphctx.testing.graph_conformance.GraphLayerConformance`; test data
helpers are in :mod:`graphctx.testing.fixtures`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from graphctx.contract import NodeKind
from graphctx.errors import ConfigurationError, EmbedderMismatchError, GraphctxError
from graphctx.store.candidate_lists import CandidateList
from graphctx.store.namespace_embedder import EmbedderRecord
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import (
    KnowledgeNode,
    NewChunk,
    NewDocument,
    Relation,
    Vector,
    WriteOutcome,
    WriteResult,
)
from graphctx.testing.fixtures import DIM, far_deadline, make_document, paragraphs, unit_vector

T = TypeVar("T")


class GraphStoreConformance:
    """Every GraphStore behaviour the retrieval pipeline relies on."""

    @pytest.fixture
    def runner(self) -> Iterator[asyncio.Runner]:
        with asyncio.Runner() as runner:
            yield runner

    @pytest.fixture
    def namespace(self) -> str:
        return "t" + uuid.uuid4().hex[:12]

    @staticmethod
    def run(runner: asyncio.Runner, coro: Coroutine[Any, Any, T]) -> T:
        return runner.run(coro)

    @staticmethod
    def deadline() -> float:
        return far_deadline()

    def write(
        self,
        runner: asyncio.Runner,
        store: GraphStore,
        doc: NewDocument,
        vector_seed: str | None = None,
    ) -> WriteOutcome:
        result = runner.run(store.write_document(doc, paragraphs(doc.text, vector_seed), "test"))
        return result.outcome

    # --- write / read round trip ----------------------------------------------------------
    def test_written_chunks_come_back_with_exact_spans_and_metadata(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        text = "First paragraph about payments.\n\nSecond paragraph 결제 재시작."
        self.write(runner, store, make_document(namespace, "doc-a", text, {"eng"}, title="A"))
        hits = runner.run(
            store.fulltext_search(namespace, "payments", frozenset({"eng"}), 5, self.deadline())
        )
        views = runner.run(
            store.fetch_chunks(
                namespace, [h.chunk_id for h in hits], frozenset({"eng"}), self.deadline()
            )
        )
        assert [v.document_id for v in views] == ["doc-a"]
        view = views[0]
        assert (
            text[view.start_char : view.end_char] == view.text == "First paragraph about payments."
        )
        assert view.scopes == frozenset({"eng"})
        assert view.source_uri == f"test://{namespace}/doc-a"
        assert view.superseded is False

    def test_fulltext_matches_two_syllable_korean_words_inside_longer_words(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(
            runner, store, make_document(namespace, "ko", "부당해고를 당했을 때 구제신청", {"hr"})
        )
        self.write(runner, store, make_document(namespace, "tax", "종합소득세 세율 안내", {"hr"}))
        hits = runner.run(
            store.fulltext_search(namespace, "해고", frozenset({"hr"}), 5, self.deadline())
        )
        assert [h.chunk_id.split("@")[0] for h in hits] == ["ko"]

    def test_fulltext_matches_english_inflections(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(
            runner, store, make_document(namespace, "en", "Restarting the gateways safely", {"e"})
        )
        hits = runner.run(
            store.fulltext_search(
                namespace, "restart gateway", frozenset({"e"}), 5, self.deadline()
            )
        )
        assert len(hits) == 1

    # --- ACL pre-filter ----------------------------------------------------------------------
    def test_out_of_scope_lookalikes_never_take_a_fulltext_slot(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        for i in range(30):
            self.write(
                runner,
                store,
                make_document(
                    namespace,
                    f"secret-{i}",
                    "payment gateway restart payment gateway restart",
                    {"hr"},
                ),
            )
        self.write(
            runner,
            store,
            make_document(
                namespace,
                "visible",
                "notes mention a payment gateway once among other things",
                {"eng"},
            ),
        )
        hits = runner.run(
            store.fulltext_search(
                namespace, "payment gateway restart", frozenset({"eng"}), 3, self.deadline()
            )
        )
        assert [h.chunk_id.split("@")[0] for h in hits] == ["visible"]

    def test_out_of_scope_lookalikes_never_take_a_vector_slot(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        for i in range(30):
            self.write(
                runner,
                store,
                make_document(namespace, f"secret-{i}", f"s{i}", {"hr"}),
                vector_seed="query",
            )
        self.write(
            runner, store, make_document(namespace, "visible", "v", {"eng"}), vector_seed="other"
        )
        hits = runner.run(
            store.vector_search(
                namespace, unit_vector("query"), frozenset({"eng"}), 1, self.deadline()
            )
        )
        assert [h.chunk_id.split("@")[0] for h in hits] == ["visible"]

    def test_fetch_never_returns_a_chunk_outside_the_scopes(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "hr-doc", "salary bands", {"hr"}))
        hits = runner.run(
            store.fulltext_search(namespace, "salary", frozenset({"hr"}), 5, self.deadline())
        )
        views = runner.run(
            store.fetch_chunks(
                namespace, [h.chunk_id for h in hits], frozenset({"eng"}), self.deadline()
            )
        )
        assert views == []

    def test_namespaces_are_hard_partitions(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        other = namespace + "x"
        self.write(runner, store, make_document(other, "doc", "payment gateway", {"eng"}))
        hits = runner.run(
            store.fulltext_search(namespace, "payment", frozenset({"eng"}), 5, self.deadline())
        )
        vector_hits = runner.run(
            store.vector_search(
                namespace, unit_vector("payment gateway"), frozenset({"eng"}), 5, self.deadline()
            )
        )
        assert (hits, vector_hits) == ([], [])

    # --- versions, idempotency, delete --------------------------------------------------------
    def test_rewriting_identical_content_changes_nothing(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        doc = make_document(namespace, "d", "same text", {"eng"})
        outcomes = [self.write(runner, store, doc), self.write(runner, store, doc)]
        assert outcomes == [WriteOutcome.ADDED, WriteOutcome.UNCHANGED]
        listed = runner.run(store.list_documents(namespace, frozenset({"eng"})))
        assert [(d.document_id, d.chunk_count) for d in listed] == [("d", 1)]

    def test_a_write_returns_the_ids_of_the_chunks_it_wrote(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        """The ingest pipeline builds the graph from these ids without reading them back."""

        def write(text: str) -> WriteResult:
            doc = make_document(namespace, "d", text, {"eng"})
            return runner.run(store.write_document(doc, paragraphs(text), "test"))

        first, second, again = write("one\n\ntwo"), write("uno\n\ndos"), write("uno\n\ndos")
        listed = runner.run(store.document_chunks(namespace, "d"))
        assert second.chunk_ids == tuple(c.chunk_id for c in listed)
        assert len(set(first.chunk_ids) | set(second.chunk_ids)) == 4
        assert (again.outcome, again.chunk_ids) == (WriteOutcome.UNCHANGED, ())

    def test_changed_content_supersedes_the_previous_version(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "broker is rabbitmq", {"eng"}))
        outcome = self.write(
            runner, store, make_document(namespace, "d", "broker is kafka", {"eng"})
        )
        assert outcome is WriteOutcome.NEW_VERSION
        hits = runner.run(
            store.fulltext_search(namespace, "broker", frozenset({"eng"}), 5, self.deadline())
        )
        views = runner.run(
            store.fetch_chunks(
                namespace, [h.chunk_id for h in hits], frozenset({"eng"}), self.deadline()
            )
        )
        by_text = {v.text: v for v in views}
        assert by_text["broker is rabbitmq"].superseded is True
        assert by_text["broker is kafka"].superseded is False
        assert (
            by_text["broker is rabbitmq"].document_version
            != by_text["broker is kafka"].document_version
        )

    def test_declared_successor_marks_a_document_superseded(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(
            runner,
            store,
            make_document(namespace, "adr-3", "use rabbitmq", {"eng"}, superseded_by="adr-7"),
        )
        hits = runner.run(
            store.fulltext_search(namespace, "rabbitmq", frozenset({"eng"}), 5, self.deadline())
        )
        (view,) = runner.run(
            store.fetch_chunks(namespace, [hits[0].chunk_id], frozenset({"eng"}), self.deadline())
        )
        assert (view.superseded, view.superseded_by) == (True, "adr-7")

    def test_narrowed_scopes_apply_to_every_version(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "v1 text", {"eng", "hr"}))
        self.write(runner, store, make_document(namespace, "d", "v2 text", {"eng", "hr"}))
        outcome = self.write(runner, store, make_document(namespace, "d", "v2 text", {"hr"}))
        assert outcome is WriteOutcome.SCOPES_UPDATED
        hits = runner.run(
            store.fulltext_search(namespace, "text", frozenset({"eng"}), 5, self.deadline())
        )
        assert hits == []

    def test_delete_removes_every_version_and_its_graph_support(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "kafka cluster", {"eng"}))
        self.write(runner, store, make_document(namespace, "d", "kafka cluster v2", {"eng"}))
        hits = runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, self.deadline())
        )
        node = KnowledgeNode("kafka", NodeKind.ENTITY, "Kafka", (hits[0].chunk_id,))
        runner.run(store.write_graph(namespace, [node], []))
        assert runner.run(store.delete_document(namespace, "d")) == 2
        after = runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, self.deadline())
        )
        nodes = runner.run(
            store.nodes_for_chunks(
                namespace, [hits[0].chunk_id], frozenset({"eng"}), self.deadline()
            )
        )
        assert (after, nodes) == ([], [])

    # --- graph --------------------------------------------------------------------------------
    def test_knowledge_nodes_are_visible_only_through_visible_chunks(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "pub", "kafka public note", {"eng"}))
        self.write(runner, store, make_document(namespace, "sec", "kafka secret note", {"hr"}))
        pub = runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, self.deadline())
        )[0].chunk_id
        sec = runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({"hr"}), 5, self.deadline())
        )[0].chunk_id
        nodes = [
            KnowledgeNode("kafka", NodeKind.ENTITY, "Kafka", (pub, sec)),
            KnowledgeNode("payroll", NodeKind.CONCEPT, "Payroll", (sec,)),
        ]
        runner.run(
            store.write_graph(
                namespace, nodes, [Relation("payroll", "kafka", "DEPENDS_ON", (sec,))]
            )
        )
        seen = runner.run(
            store.nodes_for_chunks(namespace, [pub, sec], frozenset({"eng"}), self.deadline())
        )
        assert [(n.node_id, n.supporting_chunk_ids) for n in seen] == [("kafka", (pub,))]

    def test_graph_write_with_an_unknown_chunk_writes_nothing(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "kafka", {"eng"}))
        hit = runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({"eng"}), 5, self.deadline())
        )[0].chunk_id
        good = KnowledgeNode("a", NodeKind.ENTITY, "A", (hit,))
        bad = KnowledgeNode("b", NodeKind.ENTITY, "B", ("no-such-chunk",))
        with pytest.raises((GraphctxError, ValueError)):
            runner.run(store.write_graph(namespace, [good, bad], []))
        assert (
            runner.run(
                store.nodes_for_chunks(namespace, [hit], frozenset({"eng"}), self.deadline())
            )
            == []
        )

    # --- limits -------------------------------------------------------------------------------
    def test_a_read_past_its_deadline_raises_stage_timeout(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "kafka", {"eng"}))
        with pytest.raises(StageTimeout):
            runner.run(
                store.fulltext_search(
                    namespace, "kafka", frozenset({"eng"}), 5, time.monotonic() - 1
                )
            )

    def test_mixing_embedding_dimensions_in_a_namespace_is_refused(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "kafka", {"eng"}))
        doc = make_document(namespace, "e", "other", {"eng"})
        chunk = NewChunk(0, 0, 5, "other", unit_vector("x", DIM * 2))
        with pytest.raises(ConfigurationError):
            runner.run(store.write_document(doc, [chunk], "test"))

    def test_the_first_chunk_written_records_the_namespace_embedder(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        assert runner.run(store.namespace_embedder(namespace)) is None
        self.write(runner, store, make_document(namespace, "d", "kafka", {"eng"}))
        assert runner.run(store.namespace_embedder(namespace)) == EmbedderRecord("test", DIM)
        assert runner.run(store.namespace_embedder(namespace + "x")) is None

    def test_another_embedder_of_the_same_dimension_is_refused_naming_both(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "kafka", {"eng"}))
        doc = make_document(namespace, "e", "other words", {"eng"})
        with pytest.raises(EmbedderMismatchError) as refused:
            runner.run(store.write_document(doc, paragraphs(doc.text), "another-model"))
        assert (refused.value.namespace, refused.value.stored, refused.value.requested) == (
            namespace,
            f"test ({DIM} dims)",
            f"another-model ({DIM} dims)",
        )
        assert runner.run(store.latest_version(namespace, "e")) is None
        assert runner.run(store.namespace_embedder(namespace)) == EmbedderRecord("test", DIM)

    # --- the combined candidate search --------------------------------------------------------
    def test_the_combined_candidate_search_equals_the_separate_calls(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        words = ["payment", "gateway", "restart", "ledger", "kafka", "salary"]
        for i in range(24):
            scopes = [{"eng"}, {"hr"}, {"eng", "hr"}, {"legal"}][i % 4]
            text = " ".join(words[j % len(words)] for j in range(i, i + 2 + i % 5))
            text += f"\n\nparagraph {i} about {words[(i * 7) % len(words)]} and payment"
            self.write(runner, store, make_document(namespace, f"d{i}", text, scopes))
        query = "payment gateway restart"
        vector = unit_vector("payment gateway")

        async def query_vector() -> Vector:
            return vector

        for scopes in ({"eng"}, {"hr"}, {"eng", "legal"}, {"nobody"}, set()):
            visible = frozenset(scopes)
            for limit in (3, 50):
                combined = runner.run(
                    store.search_candidates(
                        namespace, query, query_vector(), visible, limit, self.deadline()
                    )
                )
                fulltext = runner.run(
                    store.fulltext_search(namespace, query, visible, limit, self.deadline())
                )
                vector_hits = runner.run(
                    store.vector_search(namespace, vector, visible, limit, self.deadline())
                )
                ids = list(dict.fromkeys(h.chunk_id for h in [*fulltext, *vector_hits]))
                fetched = runner.run(store.fetch_chunks(namespace, ids, visible, self.deadline()))
                lists = (combined.fulltext, combined.vector)
                assert [(o.hits, o.failure) if o else None for o in lists] == [
                    (fulltext, None),
                    (vector_hits, None),
                ]
                # Any views read along the way are exactly the scoped fetch's views of them.
                by_id = {v.chunk_id: v for v in fetched}
                assert all(by_id.get(v.chunk_id) == v for v in combined.views)
                assert len({v.chunk_id for v in combined.views}) == len(combined.views)

    def test_the_combined_search_runs_only_the_lists_asked_for(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "kafka broker", {"eng"}))
        eng = frozenset({"eng"})

        async def query_vector() -> Vector:
            return unit_vector("kafka broker")

        lexical = runner.run(
            store.search_candidates(namespace, "kafka", None, eng, 5, far_deadline())
        )
        semantic = runner.run(
            store.search_candidates(namespace, None, query_vector(), eng, 5, far_deadline())
        )
        assert (lexical.vector, semantic.fulltext) == (None, None)
        assert (_documents(lexical.fulltext), _documents(semantic.vector)) == (["d"], ["d"])

    def test_a_query_vector_of_another_dimension_fails_only_the_vector_list(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.write(runner, store, make_document(namespace, "d", "kafka broker", {"eng"}))

        async def query_vector() -> Vector:
            return unit_vector("kafka", DIM * 2)

        found = runner.run(
            store.search_candidates(
                namespace, "kafka", query_vector(), frozenset({"eng"}), 5, far_deadline()
            )
        )
        vector = found.vector
        assert (_documents(found.fulltext), vector and vector.hits) == (["d"], None)
        assert isinstance(vector and vector.failure, ConfigurationError)


def _documents(found: CandidateList | None) -> list[str] | None:
    """The document ids of a finished list's hits, in order (None: not finished or not run)."""
    if found is None or found.hits is None:
        return None
    return [hit.chunk_id.split("@")[0] for hit in found.hits]
