"""The GraphStore conformance suite, importable by every backend's tests.

Use it by subclassing and providing two fixtures::

    class TestMyStore(GraphStoreConformance):
        @pytest.fixture
        def store(self, runner): ...   # an opened GraphStore
        # `runner` (an asyncio.Runner) is provided here; override it if you need to.

Each test writes into its own fresh namespace, so backends may share one server.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Coroutine, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np
import pytest

from graphctx.contract import NodeKind
from graphctx.errors import ConfigurationError, GraphctxError
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import (
    Direction,
    DocumentDates,
    ExpansionPolicy,
    KnowledgeNode,
    NewChunk,
    NewDocument,
    PathStep,
    Relation,
    Vector,
    WriteOutcome,
    name_key,
)

T = TypeVar("T")
DIM = 16
FAR_FUTURE_S = 60.0


def unit_vector(seed: str, dim: int = DIM) -> Vector:
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def make_document(
    namespace: str,
    document_id: str,
    text: str,
    scopes: set[str],
    *,
    superseded_by: str | None = None,
    version: str | None = None,
    title: str | None = None,
) -> NewDocument:
    return NewDocument(
        namespace=namespace,
        document_id=document_id,
        source_uri=f"test://{namespace}/{document_id}",
        scopes=frozenset(scopes),
        source_version=version,
        title=title,
        media_type="text",
        text=text,
        dates=DocumentDates(updated_at=datetime(2026, 1, 1, tzinfo=UTC)),
        declared_superseded_by=superseded_by,
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        metadata_hash=hashlib.sha256(f"{superseded_by}|{version}|{title}".encode()).hexdigest(),
    )


def paragraphs(text: str, vector_seed: str | None = None) -> list[NewChunk]:
    """Chunk at blank lines, span-exact; vectors derived from the text (or a given seed)."""
    chunks: list[NewChunk] = []
    start = 0
    for ordinal, part in enumerate(text.split("\n\n")):
        end = start + len(part)
        seed = vector_seed if vector_seed is not None else part
        chunks.append(NewChunk(ordinal, start, end, part, unit_vector(seed)))
        start = end + 2
    return chunks


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
        return time.monotonic() + FAR_FUTURE_S

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


class GraphLayerConformance:
    """Graph expansion, neighbourhoods, entity lookup and derived text (issue 4).

    Mixed into :class:`GraphStoreConformance`; uses the same ``runner``/``store``/``namespace``.
    """

    def doc(
        self,
        runner: asyncio.Runner,
        store: GraphStore,
        namespace: str,
        doc_id: str,
        text: str,
        scopes: set[str],
    ) -> str:
        """Write a one-chunk document and return its chunk id."""
        document = make_document(namespace, doc_id, text, scopes)
        runner.run(store.write_document(document, paragraphs(text), "test"))
        (chunk,) = runner.run(store.document_chunks(namespace, doc_id))
        return chunk.chunk_id

    def law_graph(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> dict[str, str]:
        """Remedy, restriction and notice articles sharing one Concept; a secret article too."""
        ids = {
            name: self.doc(runner, store, namespace, name, text, scopes)
            for name, text, scopes in (
                ("remedy", "Article 28 remedy: apply to the labour commission.", {"law"}),
                ("restriction", "Article 23 restriction: no dismissal without cause.", {"law"}),
                ("notice", "Article 26 notice: thirty days before dismissal.", {"law"}),
                ("secret", "Internal memo on a dismissal case.", {"hr"}),
            )
        }
        concept = KnowledgeNode(
            "concept:dismissal",
            NodeKind.CONCEPT,
            "Dismissal and job security",
            (ids["remedy"], ids["restriction"], ids["notice"], ids["secret"]),
            description="What a worker must know when dismissed",
            node_type="procedure",
            support_link="PART_OF",
            support_roles=((ids["remedy"], "remedy"), (ids["restriction"], "requirement")),
        )
        runner.run(store.write_graph(namespace, [concept], []))
        return ids

    def services(self, runner: asyncio.Runner, store: GraphStore, namespace: str) -> dict[str, str]:
        """payment-service -DEPENDS_ON-> postgres-main; checkout -DEPENDS_ON-> payment-service;
        payment-service -DEPENDS_ON-> vault-secret (known only from an hr-scoped document)."""
        ids = {
            name: self.doc(runner, store, namespace, name, text, scopes)
            for name, text, scopes in (
                ("svc-payment", "payment-service handles card payments.", {"eng"}),
                ("svc-postgres", "postgres-main is the primary database.", {"eng"}),
                ("svc-checkout", "checkout renders the basket and calls payments.", {"eng"}),
                ("dep-note", "payment-service depends on postgres-main for ledgers.", {"eng"}),
                ("hidden-note", "payment-service reads keys from vault-secret.", {"hr"}),
                ("svc-vault", "vault-secret stores the keys.", {"hr"}),
            )
        }
        nodes = [
            KnowledgeNode(
                "svc:payment",
                NodeKind.ENTITY,
                "payment-service",
                (ids["svc-payment"],),
                node_type="Service",
                aliases=("결제서비스", "payments"),
            ),
            KnowledgeNode(
                "svc:postgres",
                NodeKind.ENTITY,
                "postgres-main",
                (ids["svc-postgres"],),
                node_type="System",
            ),
            KnowledgeNode(
                "svc:checkout",
                NodeKind.ENTITY,
                "checkout",
                (ids["svc-checkout"],),
                node_type="Service",
            ),
            KnowledgeNode(
                "svc:vault",
                NodeKind.ENTITY,
                "vault-secret",
                (ids["svc-vault"],),
                node_type="System",
            ),
        ]
        relations = [
            Relation("svc:payment", "svc:postgres", "DEPENDS_ON", (ids["dep-note"],)),
            Relation("svc:checkout", "svc:payment", "DEPENDS_ON", (ids["svc-checkout"],)),
            Relation("svc:payment", "svc:vault", "DEPENDS_ON", (ids["hidden-note"],)),
        ]
        runner.run(store.write_graph(namespace, nodes, relations))
        return ids

    # --- expansion ----------------------------------------------------------------------------
    def test_expansion_reaches_articles_sharing_a_concept_with_the_path(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.law_graph(runner, store, namespace)
        policy = ExpansionPolicy(hop_decay=0.5)
        result = runner.run(
            store.expand(namespace, {ids["remedy"]: 1.0}, frozenset({"law"}), policy, _deadline())
        )
        by_chunk = {e.chunk_id: e for e in result.expansions}
        assert sorted(by_chunk) == sorted([ids["restriction"], ids["notice"]])
        restriction = by_chunk[ids["restriction"]]
        assert (restriction.hops, restriction.score) == (1, 0.5)
        assert restriction.path == (
            PathStep(NodeKind.CHUNK, ids["remedy"]),
            PathStep(NodeKind.CONCEPT, "concept:dismissal", "PART_OF(remedy)"),
            PathStep(NodeKind.CHUNK, ids["restriction"], "<-PART_OF(requirement)"),
        )
        assert result.withheld == 1  # the hr memo in the same concept, counted, not named

    def test_expansion_confirms_other_anchors_but_never_returns_a_chunk_to_itself(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.law_graph(runner, store, namespace)
        result = runner.run(
            store.expand(
                namespace,
                {ids["remedy"]: 1.0, ids["notice"]: 0.5},
                frozenset({"law"}),
                ExpansionPolicy(hop_decay=0.5),
                _deadline(),
            )
        )
        reached = [(e.path[0].id, e.chunk_id, e.score) for e in result.expansions]
        assert reached == [
            (ids["remedy"], ids["notice"], 0.5),
            (ids["remedy"], ids["restriction"], 0.5),
            (ids["notice"], ids["remedy"], 0.25),
        ] or reached == [
            (ids["remedy"], ids["restriction"], 0.5),
            (ids["remedy"], ids["notice"], 0.5),
            (ids["notice"], ids["remedy"], 0.25),
        ]

    def test_expansion_follows_typed_relations_both_ways(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.services(runner, store, namespace)
        result = runner.run(
            store.expand(
                namespace,
                {ids["svc-payment"]: 1.0},
                frozenset({"eng"}),
                ExpansionPolicy(),
                _deadline(),
            )
        )
        vias = {e.chunk_id: [s.via for s in e.path] for e in result.expansions}
        assert vias[ids["svc-postgres"]] == [None, "SUPPORTS", "DEPENDS_ON", "<-SUPPORTS"]
        assert vias[ids["svc-checkout"]] == [None, "SUPPORTS", "<-DEPENDS_ON", "<-SUPPORTS"]
        assert ids["svc-vault"] not in vias
        assert result.withheld == 1  # the relation known only from the hr note

    def test_a_hidden_node_on_the_only_path_blocks_the_expansion(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        a = self.doc(runner, store, namespace, "a", "alpha public", {"eng"})
        hidden = self.doc(runner, store, namespace, "h", "hidden middle", {"hr"})
        c = self.doc(runner, store, namespace, "c", "gamma public", {"eng"})
        nodes = [
            KnowledgeNode("n:a", NodeKind.ENTITY, "A", (a,)),
            KnowledgeNode("n:h", NodeKind.ENTITY, "H", (hidden,)),
            KnowledgeNode("n:c", NodeKind.ENTITY, "C", (c,)),
        ]
        relations = [
            Relation("n:a", "n:h", "REQUIRES", (a,)),
            Relation("n:h", "n:c", "REQUIRES", (c,)),
        ]
        runner.run(store.write_graph(namespace, nodes, relations))
        policy = ExpansionPolicy(max_hops=2)
        blocked = runner.run(
            store.expand(namespace, {a: 1.0}, frozenset({"eng"}), policy, _deadline())
        )
        allowed = runner.run(
            store.expand(namespace, {a: 1.0}, frozenset({"eng", "hr"}), policy, _deadline())
        )
        assert (blocked.expansions, blocked.withheld) == ((), 1)
        assert [(e.chunk_id, e.hops) for e in allowed.expansions] == [(hidden, 1), (c, 2)]
        assert allowed.expansions[1].path[3] == PathStep(NodeKind.CHUNK, hidden, "<-SUPPORTS")

    def test_references_are_walked_only_along_their_direction_by_default(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        article = self.doc(runner, store, namespace, "art-26", "notice before dismissal", {"law"})
        penalty = self.doc(runner, store, namespace, "art-110", "fine for breaking art 26", {"law"})
        runner.run(
            store.write_graph(
                namespace,
                [
                    KnowledgeNode("a:26", NodeKind.ENTITY, "26", (article,)),
                    KnowledgeNode("a:110", NodeKind.ENTITY, "110", (penalty,)),
                ],
                [Relation("a:110", "a:26", "REFERENCES", (penalty,))],
            )
        )
        law = frozenset({"law"})
        forward = runner.run(
            store.expand(namespace, {penalty: 1.0}, law, ExpansionPolicy(), _deadline())
        )
        backward = runner.run(
            store.expand(namespace, {article: 1.0}, law, ExpansionPolicy(), _deadline())
        )
        both = runner.run(
            store.expand(
                namespace,
                {article: 1.0},
                law,
                ExpansionPolicy(forward_only=frozenset()),
                _deadline(),
            )
        )
        assert [e.chunk_id for e in forward.expansions] == [article]
        assert backward.expansions == ()
        assert [(e.chunk_id, e.path[2].via) for e in both.expansions] == [(penalty, "<-REFERENCES")]

    def test_a_chunk_that_only_mentions_the_shared_node_is_scored_down_by_mention_weight(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        home = self.doc(runner, store, namespace, "home", "Kafka is our message broker", {"eng"})
        other = self.doc(runner, store, namespace, "other", "orders go out through Kafka", {"eng"})
        runner.run(
            store.write_graph(
                namespace,
                [
                    KnowledgeNode("e:kafka", NodeKind.ENTITY, "Kafka", (home,)),
                    KnowledgeNode(
                        "e:kafka", NodeKind.ENTITY, "Kafka", (other,), support_link="MENTIONS"
                    ),
                ],
                [],
            )
        )
        eng = frozenset({"eng"})
        policy = ExpansionPolicy(hop_decay=0.5, mention_weight=0.25)
        to_mention = runner.run(store.expand(namespace, {home: 1.0}, eng, policy, _deadline()))
        to_home = runner.run(store.expand(namespace, {other: 1.0}, eng, policy, _deadline()))
        around = runner.run(
            store.neighbourhood(namespace, ["e:kafka"], eng, ExpansionPolicy(), _deadline())
        )
        assert [(e.chunk_id, e.score, e.path[-1].via) for e in to_mention.expansions] == [
            (other, 0.125, "<-MENTIONS")
        ]
        assert [(e.chunk_id, e.score, e.path[1].via) for e in to_home.expansions] == [
            (home, 0.5, "MENTIONS")
        ]
        assert [(e.chunk_id, e.score) for e in around.expansions] == [(home, 1.0), (other, 0.5)]

    def test_expansion_respects_hops_fanout_and_relation_types(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.services(runner, store, namespace)
        eng = frozenset({"eng"})
        none = runner.run(
            store.expand(
                namespace, {ids["svc-payment"]: 1.0}, eng, ExpansionPolicy(max_hops=0), _deadline()
            )
        )
        only_concepts = runner.run(
            store.expand(
                namespace,
                {ids["svc-payment"]: 1.0},
                eng,
                ExpansionPolicy(relation_types=frozenset()),
                _deadline(),
            )
        )
        one = runner.run(
            store.expand(
                namespace,
                {ids["svc-payment"]: 1.0},
                eng,
                ExpansionPolicy(max_fanout=1),
                _deadline(),
            )
        )
        assert none.expansions == only_concepts.expansions == ()
        assert len(one.expansions) == 1

    def test_expansion_past_its_deadline_raises_stage_timeout(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.law_graph(runner, store, namespace)
        with pytest.raises(StageTimeout):
            runner.run(
                store.expand(
                    namespace,
                    {ids["remedy"]: 1.0},
                    frozenset({"law"}),
                    ExpansionPolicy(),
                    time.monotonic() - 1,
                )
            )

    # --- neighbourhood ------------------------------------------------------------------------
    def test_neighbourhood_answers_dependencies_with_the_relation_path(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.services(runner, store, namespace)
        result = runner.run(
            store.neighbourhood(
                namespace,
                ["svc:payment"],
                frozenset({"eng"}),
                ExpansionPolicy(direction=Direction.OUT),
                _deadline(),
            )
        )
        paths = {
            e.chunk_id: (e.hops, [(s.kind, s.id, s.via) for s in e.path]) for e in result.expansions
        }
        assert paths[ids["svc-payment"]] == (
            0,
            [
                (NodeKind.ENTITY, "svc:payment", None),
                (NodeKind.CHUNK, ids["svc-payment"], "<-SUPPORTS"),
            ],
        )
        assert paths[ids["dep-note"]] == (
            1,
            [
                (NodeKind.ENTITY, "svc:payment", None),
                (NodeKind.ENTITY, "svc:postgres", "DEPENDS_ON"),
                (NodeKind.CHUNK, ids["dep-note"], "<-STATES"),
            ],
        )
        assert paths[ids["svc-postgres"]][1][1] == (NodeKind.ENTITY, "svc:postgres", "DEPENDS_ON")
        assert ids["svc-checkout"] not in paths  # checkout depends on payment, not the reverse
        assert set(paths).isdisjoint({ids["svc-vault"], ids["hidden-note"]})
        assert result.withheld == 1

    def test_neighbourhood_walks_incoming_relations_for_dependants(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.services(runner, store, namespace)
        result = runner.run(
            store.neighbourhood(
                namespace,
                ["svc:payment"],
                frozenset({"eng"}),
                ExpansionPolicy(direction=Direction.IN),
                _deadline(),
            )
        )
        reached = {e.chunk_id: e.path[1].via for e in result.expansions if e.hops == 1}
        assert reached == {ids["svc-checkout"]: "<-DEPENDS_ON"}

    def test_neighbourhood_of_a_hidden_node_is_empty(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.services(runner, store, namespace)
        result = runner.run(
            store.neighbourhood(
                namespace, ["svc:vault"], frozenset({"eng"}), ExpansionPolicy(), _deadline()
            )
        )
        assert (result.expansions, result.withheld) == ((), 0)

    # --- entity lookup ------------------------------------------------------------------------
    def test_lookup_finds_visible_entities_by_name_or_alias_with_their_relations(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.services(runner, store, namespace)
        keys = [name_key(k) for k in ("Payment-Service", "결제서비스", "vault-secret", "nothing")]
        found = runner.run(
            store.lookup_entities(namespace, keys, frozenset({"eng"}), 10, _deadline())
        )
        assert sorted((m.key, m.node_id, m.node_type, m.relation_count) for m in found) == [
            ("payment-service", "svc:payment", "Service", 2),
            ("결제서비스", "svc:payment", "Service", 2),
        ]

    def test_lookup_counts_only_relations_visible_to_the_scopes(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.services(runner, store, namespace)
        both = runner.run(
            store.lookup_entities(
                namespace, ["payment-service"], frozenset({"eng", "hr"}), 10, _deadline()
            )
        )
        assert [m.relation_count for m in both] == [3]

    def test_lookup_counts_visible_mentions_as_relations(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        home = self.doc(runner, store, namespace, "home", "Xawery is a director", {"eng"})
        public = self.doc(runner, store, namespace, "pub", "a film by Xawery", {"eng"})
        secret = self.doc(runner, store, namespace, "sec", "Xawery in a memo", {"hr"})
        runner.run(
            store.write_graph(
                namespace,
                [
                    KnowledgeNode(
                        "p:x", NodeKind.ENTITY, "Xawery", (public, secret), support_link="MENTIONS"
                    ),
                    KnowledgeNode("p:x", NodeKind.ENTITY, "Xawery", (home,)),
                ],
                [],
            )
        )
        found = runner.run(
            store.lookup_entities(namespace, ["xawery"], frozenset({"eng"}), 5, _deadline())
        )
        assert [(m.node_id, m.relation_count) for m in found] == [("p:x", 1)]

    # --- derived text -------------------------------------------------------------------------
    def test_derived_text_needs_every_supporting_document_visible(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.law_graph(runner, store, namespace)
        law_only = runner.run(
            store.describe_nodes(namespace, ["concept:dismissal"], frozenset({"law"}), _deadline())
        )
        everything = runner.run(
            store.describe_nodes(
                namespace, ["concept:dismissal"], frozenset({"law", "hr"}), _deadline()
            )
        )
        nobody = runner.run(
            store.describe_nodes(namespace, ["concept:dismissal"], frozenset({"x"}), _deadline())
        )
        assert [(t.node_id, t.name, t.description) for t in law_only] == [
            ("concept:dismissal", None, None)
        ]
        assert [(t.name, t.description) for t in everything] == [
            ("Dismissal and job security", "What a worker must know when dismissed")
        ]
        assert nobody == []
        seen = runner.run(
            store.nodes_for_chunks(namespace, [ids["remedy"]], frozenset({"law"}), _deadline())
        )
        assert [n.name for n in seen] == ["concept:dismissal"]  # the id, never the derived name

    # --- write path ---------------------------------------------------------------------------
    def test_document_chunks_lists_the_latest_version_in_order(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        runner.run(
            store.write_document(
                make_document(namespace, "d", "one\n\ntwo", {"eng"}),
                paragraphs("one\n\ntwo"),
                "test",
            )
        )
        runner.run(
            store.write_document(
                make_document(namespace, "d", "uno\n\ndos", {"eng"}),
                paragraphs("uno\n\ndos"),
                "test",
            )
        )
        chunks = runner.run(store.document_chunks(namespace, "d"))
        assert [(c.text, c.ordinal, c.superseded) for c in chunks] == [
            ("uno", 0, False),
            ("dos", 1, False),
        ]
        assert runner.run(store.document_chunks(namespace, "missing")) == []

    def test_a_mention_never_downgrades_a_home_link_nor_erases_a_description(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        home = self.doc(runner, store, namespace, "home", "kafka is our broker", {"eng"})
        other = self.doc(runner, store, namespace, "other", "we publish to kafka", {"eng"})
        first = KnowledgeNode("e:kafka", NodeKind.ENTITY, "Kafka", (home,), description="Broker")
        again = KnowledgeNode(
            "e:kafka", NodeKind.ENTITY, "Kafka", (home, other), support_link="MENTIONS"
        )
        runner.run(store.write_graph(namespace, [first], []))
        runner.run(store.write_graph(namespace, [again], []))
        result = runner.run(
            store.neighbourhood(
                namespace, ["e:kafka"], frozenset({"eng"}), ExpansionPolicy(), _deadline()
            )
        )
        texts = runner.run(
            store.describe_nodes(namespace, ["e:kafka"], frozenset({"eng"}), _deadline())
        )
        assert [(e.chunk_id, e.path[-1].via) for e in result.expansions] == [
            (home, "<-SUPPORTS"),
            (other, "<-MENTIONS"),
        ]
        assert [t.description for t in texts] == ["Broker"]


def _deadline() -> float:
    return time.monotonic() + FAR_FUTURE_S
