"""The graph-layer half of the GraphStore conformance suite (expansion, neighbourhoods,
entity lookup, derived text). Mix it into a GraphStoreConformance subclass::

    class TestMyStore(GraphStoreConformance, GraphLayerConformance):
        @pytest.fixture
        def store(self, runner): ...
"""

from __future__ import annotations

import asyncio
import time

import pytest

from graphctx.contract import NodeKind
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import (
    Direction,
    ExpansionPolicy,
    KnowledgeNode,
    PathStep,
    Relation,
)
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs
from graphctx.text.names import name_key


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
        policy = ExpansionPolicy(hop_decay=0.5, degree_exponent=0.0)
        result = runner.run(
            store.expand(
                namespace, {ids["remedy"]: 1.0}, frozenset({"law"}), policy, far_deadline()
            )
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

    def test_a_nodes_score_is_shared_among_the_visible_chunks_it_leads_to(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.law_graph(runner, store, namespace)
        result = runner.run(
            store.expand(
                namespace,
                {ids["remedy"]: 1.0},
                frozenset({"law"}),
                ExpansionPolicy(hop_decay=0.5, degree_exponent=1.0),
                far_deadline(),
            )
        )
        # the concept leads to two visible chunks (the hr memo is withheld, not counted)
        assert sorted(e.score for e in result.expansions) == [0.25, 0.25]

    def test_expansion_adds_up_support_from_several_anchors_but_never_returns_a_chunk_to_itself(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.law_graph(runner, store, namespace)
        result = runner.run(
            store.expand(
                namespace,
                {ids["remedy"]: 1.0, ids["notice"]: 0.5},
                frozenset({"law"}),
                ExpansionPolicy(hop_decay=0.5, degree_exponent=0.0),
                far_deadline(),
            )
        )
        reached = [(e.path[0].id, e.chunk_id, e.score, e.origins) for e in result.expansions]
        assert reached == [
            (ids["remedy"], ids["restriction"], 0.625, 2),  # 1 - (1 - 0.5) * (1 - 0.25)
            (ids["remedy"], ids["notice"], 0.5, 1),
            (ids["notice"], ids["remedy"], 0.25, 1),
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
                far_deadline(),
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
            store.expand(namespace, {a: 1.0}, frozenset({"eng"}), policy, far_deadline())
        )
        allowed = runner.run(
            store.expand(namespace, {a: 1.0}, frozenset({"eng", "hr"}), policy, far_deadline())
        )
        assert (blocked.expansions, blocked.withheld) == ((), 1)
        assert [(e.chunk_id, e.hops) for e in allowed.expansions] == [(hidden, 1), (c, 2)]
        assert allowed.expansions[1].path[3] == PathStep(NodeKind.CHUNK, hidden, "<-SUPPORTS")

    def test_references_are_walked_against_their_direction_at_the_reverse_weight(
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
        policy = ExpansionPolicy(hop_decay=0.5, reverse_weight=0.5)
        forward = runner.run(store.expand(namespace, {penalty: 1.0}, law, policy, far_deadline()))
        backward = runner.run(store.expand(namespace, {article: 1.0}, law, policy, far_deadline()))
        forward_only = runner.run(
            store.expand(
                namespace,
                {article: 1.0},
                law,
                ExpansionPolicy(forward_only=frozenset({"REFERENCES"})),
                far_deadline(),
            )
        )
        assert [(e.chunk_id, e.score) for e in forward.expansions] == [(article, 0.5)]
        assert [(e.chunk_id, e.path[2].via, e.score) for e in backward.expansions] == [
            (penalty, "<-REFERENCES", 0.25)
        ]
        assert forward_only.expansions == ()

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
        policy = ExpansionPolicy(hop_decay=0.5, mention_weight=0.25, degree_exponent=0.0)
        to_mention = runner.run(store.expand(namespace, {home: 1.0}, eng, policy, far_deadline()))
        to_home = runner.run(store.expand(namespace, {other: 1.0}, eng, policy, far_deadline()))
        around = runner.run(
            store.neighbourhood(
                namespace, ["e:kafka"], eng, ExpansionPolicy(degree_exponent=0.0), far_deadline()
            )
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
                namespace,
                {ids["svc-payment"]: 1.0},
                eng,
                ExpansionPolicy(max_hops=0),
                far_deadline(),
            )
        )
        only_concepts = runner.run(
            store.expand(
                namespace,
                {ids["svc-payment"]: 1.0},
                eng,
                ExpansionPolicy(relation_types=frozenset()),
                far_deadline(),
            )
        )
        one = runner.run(
            store.expand(
                namespace,
                {ids["svc-payment"]: 1.0},
                eng,
                ExpansionPolicy(max_fanout=1),
                far_deadline(),
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
                far_deadline(),
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
                far_deadline(),
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
                namespace, ["svc:vault"], frozenset({"eng"}), ExpansionPolicy(), far_deadline()
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
            store.lookup_entities(namespace, keys, frozenset({"eng"}), 10, far_deadline())
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
                namespace, ["payment-service"], frozenset({"eng", "hr"}), 10, far_deadline()
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
            store.lookup_entities(namespace, ["xawery"], frozenset({"eng"}), 5, far_deadline())
        )
        assert [(m.node_id, m.relation_count) for m in found] == [("p:x", 1)]

    # --- what a hidden declaration says: ids, names, aliases, types (issue 13, items 5, 6) -----
    def hidden_home_graph(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> dict[str, str]:
        """``doc:hr-memo``, an hr memo's own node, is mentioned by two eng chunks (an extractor
        links every chunk naming a document's title); ``e:ledger`` is known only from them."""
        ids = {
            name: self.doc(runner, store, namespace, name, text, scopes)
            for name, text, scopes in (
                ("memo", "Compass memo: forty engineers leave in March.", {"hr"}),
                ("plan", "The Compass memo delays the ledger migration.", {"eng"}),
                ("sprint", "Read the Compass memo before the ledger sprint.", {"eng"}),
            )
        }
        mentions = (ids["plan"], ids["sprint"])
        nodes = [
            KnowledgeNode(
                "doc:hr-memo",
                NodeKind.ENTITY,
                "Compass memo",
                mentions,
                node_type="Document",
                support_link="MENTIONS",
            ),
            KnowledgeNode(
                "doc:hr-memo", NodeKind.ENTITY, "Compass memo", (ids["memo"],), node_type="Document"
            ),
            KnowledgeNode(
                "e:ledger",
                NodeKind.ENTITY,
                "ledger",
                mentions,
                node_type="System",
                support_link="MENTIONS",
            ),
        ]
        runner.run(store.write_graph(namespace, nodes, []))
        return ids

    def test_a_mention_never_shows_a_node_whose_home_chunks_are_hidden(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.hidden_home_graph(runner, store, namespace)
        eng, everyone = frozenset({"eng"}), frozenset({"eng", "hr"})
        policy, keys = ExpansionPolicy(), ["compass memo", "ledger"]
        expanded = runner.run(
            store.expand(namespace, {ids["plan"]: 1.0}, eng, policy, far_deadline())
        )
        steps = {step.id for e in expanded.expansions for step in e.path}
        assert [e.chunk_id for e in expanded.expansions] == [ids["sprint"]]
        assert "doc:hr-memo" not in steps
        assert "e:ledger" in steps
        assert expanded.withheld == 1  # the memo's node, counted, never named
        found = runner.run(store.lookup_entities(namespace, keys, eng, 10, far_deadline()))
        assert [(m.key, m.node_id, m.node_type) for m in found] == [
            ("ledger", "e:ledger", "System")
        ]
        around = runner.run(
            store.neighbourhood(namespace, ["doc:hr-memo"], eng, policy, far_deadline())
        )
        assert (around.expansions, around.withheld) == ((), 0)
        described = runner.run(
            store.describe_nodes(namespace, ["doc:hr-memo", "e:ledger"], eng, far_deadline())
        )
        assert [t.node_id for t in described] == ["e:ledger"]
        of_chunk = runner.run(store.nodes_for_chunks(namespace, [ids["plan"]], eng, far_deadline()))
        assert [n.node_id for n in of_chunk] == ["e:ledger"]
        # A reader of the memo reaches it through the same mentions.
        found = runner.run(store.lookup_entities(namespace, keys, everyone, 10, far_deadline()))
        assert [(m.key, m.node_id, m.node_type) for m in found] == [
            ("compass memo", "doc:hr-memo", "Document"),
            ("ledger", "e:ledger", "System"),
        ]
        expanded = runner.run(
            store.expand(namespace, {ids["plan"]: 1.0}, everyone, policy, far_deadline())
        )
        assert "doc:hr-memo" in {step.id for e in expanded.expansions for step in e.path}

    def test_a_key_or_type_is_shown_only_through_a_visible_declaration_of_it(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        public = self.doc(runner, store, namespace, "billing", "billing-core bills.", {"eng"})
        secret = self.doc(runner, store, namespace, "quill", "Quill runs billing-core.", {"hr"})
        nodes = [
            KnowledgeNode("svc:billing", NodeKind.ENTITY, "billing-core", (public,)),
            KnowledgeNode(
                "svc:billing",
                NodeKind.ENTITY,
                "billing-core",
                (secret,),
                node_type="Person",
                aliases=("quill-ledger",),
            ),
        ]
        runner.run(store.write_graph(namespace, nodes, []))
        keys = ["billing-core", "quill-ledger"]
        eng, everyone = frozenset({"eng"}), frozenset({"eng", "hr"})
        found = runner.run(store.lookup_entities(namespace, keys, eng, 10, far_deadline()))
        assert [(m.key, m.node_type) for m in found] == [("billing-core", None)]
        described = runner.run(
            store.describe_nodes(namespace, ["svc:billing"], eng, far_deadline())
        )
        assert [(t.node_id, t.node_type) for t in described] == [("svc:billing", None)]
        found = runner.run(store.lookup_entities(namespace, keys, everyone, 10, far_deadline()))
        assert [(m.key, m.node_type) for m in found] == [
            ("billing-core", "Person"),
            ("quill-ledger", "Person"),
        ]

    def test_an_alias_only_a_hidden_chunk_mentions_is_never_matched(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        home = self.doc(runner, store, namespace, "home", "Kafka is our broker", {"eng"})
        hidden = self.doc(runner, store, namespace, "hidden", "Kestrel, our Kafka", {"hr"})
        nodes = [
            KnowledgeNode("e:kafka", NodeKind.ENTITY, "Kafka", (home,)),
            KnowledgeNode(
                "e:kafka",
                NodeKind.ENTITY,
                "Kafka",
                (hidden,),
                aliases=("Kestrel",),
                support_link="MENTIONS",
            ),
        ]
        runner.run(store.write_graph(namespace, nodes, []))
        eng = frozenset({"eng"})
        assert (
            runner.run(store.lookup_entities(namespace, ["kestrel"], eng, 5, far_deadline())) == []
        )
        found = runner.run(
            store.lookup_entities(namespace, ["kestrel"], eng | {"hr"}, 5, far_deadline())
        )
        assert [(m.key, m.node_id) for m in found] == [("kestrel", "e:kafka")]

    def test_a_concept_name_built_with_a_hidden_member_is_never_matched(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        self.law_graph(runner, store, namespace)
        keys = [name_key("Dismissal and job security")]
        law = frozenset({"law"})
        assert runner.run(store.lookup_entities(namespace, keys, law, 5, far_deadline())) == []
        found = runner.run(store.lookup_entities(namespace, keys, law | {"hr"}, 5, far_deadline()))
        assert [(m.node_id, m.node_type) for m in found] == [("concept:dismissal", "procedure")]

    # --- derived text -------------------------------------------------------------------------
    def test_derived_text_needs_every_supporting_document_visible(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        ids = self.law_graph(runner, store, namespace)
        law_only = runner.run(
            store.describe_nodes(
                namespace, ["concept:dismissal"], frozenset({"law"}), far_deadline()
            )
        )
        everything = runner.run(
            store.describe_nodes(
                namespace, ["concept:dismissal"], frozenset({"law", "hr"}), far_deadline()
            )
        )
        nobody = runner.run(
            store.describe_nodes(namespace, ["concept:dismissal"], frozenset({"x"}), far_deadline())
        )
        assert [(t.node_id, t.name, t.description) for t in law_only] == [
            ("concept:dismissal", None, None)
        ]
        assert [(t.name, t.description) for t in everything] == [
            ("Dismissal and job security", "What a worker must know when dismissed")
        ]
        assert nobody == []
        seen = runner.run(
            store.nodes_for_chunks(namespace, [ids["remedy"]], frozenset({"law"}), far_deadline())
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
                namespace, ["e:kafka"], frozenset({"eng"}), ExpansionPolicy(), far_deadline()
            )
        )
        texts = runner.run(
            store.describe_nodes(namespace, ["e:kafka"], frozenset({"eng"}), far_deadline())
        )
        assert [(e.chunk_id, e.path[-1].via) for e in result.expansions] == [
            (home, "<-SUPPORTS"),
            (other, "<-MENTIONS"),
        ]
        assert [t.description for t in texts] == ["Broker"]
