"""The graph-lifecycle half of the GraphStore conformance suite (issue 13, items 7 and 10c).

Mix it into a GraphStoreConformance subclass, like the graph layer's half.

* Delete: a deleted document takes its graph with it. A node whose home (a ``SUPPORTS`` or
  ``PART_OF`` link) was only in the deleted document goes, even when other chunks mention it
  (the offline extractor's document node, named by the title); a node and a relation whose
  only support came from its chunks go; a node supported elsewhere only loses that support.
  Nothing of the deleted document is served afterwards: not in chunk nodes, entity lookup,
  expansion or neighbourhood paths, nor derived text.
* Dangling relations: a relation may name an end node that does not exist yet. It is kept,
  never walked and never counted until a node with that id is written, then walked like any
  other (``docs/graph-format.md``). Both backends behave the same; neither raises.
"""

from __future__ import annotations

import asyncio

from graphctx.contract import NodeKind
from graphctx.store.port import GraphStore
from graphctx.store.records import (
    MENTIONS,
    ExpansionPolicy,
    ExpansionResult,
    KnowledgeNode,
    Relation,
)
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs
from graphctx.text.names import name_key

ENG = frozenset({"eng"})
SECRET_TITLE = "Project Nightjar layoffs"


class GraphLifecycleConformance:
    """Deleting a document removes what only it supported; dangling relations wait."""

    def _chunk(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str, doc_id: str, text: str
    ) -> str:
        document = make_document(namespace, doc_id, text, {"eng"})
        runner.run(store.write_document(document, paragraphs(text), "test"))
        (chunk,) = runner.run(store.document_chunks(namespace, doc_id))
        return chunk.chunk_id

    def _served_node_ids(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str, chunk_ids: list[str]
    ) -> set[str]:
        """Every node id any graph read hands out around ``chunk_ids``."""
        deadline = far_deadline()
        seen = {
            n.node_id
            for n in runner.run(store.nodes_for_chunks(namespace, chunk_ids, ENG, deadline))
        }
        anchors = dict.fromkeys(chunk_ids, 1.0)
        policy = ExpansionPolicy(max_hops=2, include_same_document=True)
        results: list[ExpansionResult] = [
            runner.run(store.expand(namespace, anchors, ENG, policy, deadline)),
            runner.run(store.neighbourhood(namespace, sorted(seen), ENG, policy, deadline)),
        ]
        for result in results:
            seen |= {step.id for e in result.expansions for step in e.path}
        return seen

    def test_a_deleted_document_leaves_nothing_of_itself_in_the_graph(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        secret = self._chunk(runner, store, namespace, "memo", "Nightjar memo: kafka cuts.")
        other = self._chunk(
            runner, store, namespace, "notes", f"Notes on {SECRET_TITLE} and kafka."
        )
        third = self._chunk(runner, store, namespace, "ops", "kafka operations guide.")
        nodes = [
            # Mentions first, as the extractor writes them.
            KnowledgeNode(
                "doc:memo", NodeKind.ENTITY, SECRET_TITLE, (other,), support_link=MENTIONS
            ),
            KnowledgeNode("doc:memo", NodeKind.ENTITY, SECRET_TITLE, (secret,), node_type="Doc"),
            KnowledgeNode("e:kafka", NodeKind.ENTITY, "Kafka", (secret, other, third)),
            KnowledgeNode("c:cuts", NodeKind.CONCEPT, "Cuts", (secret,), support_link="PART_OF"),
            KnowledgeNode("doc:ops", NodeKind.ENTITY, "Ops guide", (third,)),
        ]
        relations = [
            Relation("doc:memo", "doc:ops", "REFERENCES", (secret,)),
            Relation("doc:ops", "doc:memo", "CONNECTED_TO", (third,)),
        ]
        runner.run(store.write_graph(namespace, nodes, relations))
        before = self._served_node_ids(runner, store, namespace, [other, third])
        assert "doc:memo" in before  # the attack below would mean nothing otherwise

        assert runner.run(store.delete_document(namespace, "memo")) == 1

        deadline = far_deadline()
        assert self._served_node_ids(runner, store, namespace, [other, third]) == {
            "e:kafka",
            "doc:ops",
            other,
            third,
        }
        lookup = runner.run(
            store.lookup_entities(namespace, [name_key(SECRET_TITLE)], ENG, 10, deadline)
        )
        described = runner.run(
            store.describe_nodes(namespace, ["doc:memo", "c:cuts", "e:kafka"], ENG, deadline)
        )
        kafka = runner.run(store.nodes_for_chunks(namespace, [other, third], ENG, deadline))
        assert lookup == []
        assert [n.node_id for n in described] == ["e:kafka"]
        # other < third as chunk ids ("notes@1#0", "ops@1#0").
        assert sorted((n.node_id, n.supporting_chunk_ids) for n in kafka) == [
            ("doc:ops", (third,)),
            ("e:kafka", (other, third)),
        ]

    def test_a_document_written_again_after_its_delete_gets_a_fresh_graph(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        memo = self._chunk(runner, store, namespace, "memo", "Nightjar memo.")
        other = self._chunk(runner, store, namespace, "notes", f"Notes on {SECRET_TITLE}.")
        runner.run(
            store.write_graph(
                namespace,
                [
                    KnowledgeNode(
                        "doc:memo", NodeKind.ENTITY, SECRET_TITLE, (other,), support_link=MENTIONS
                    ),
                    KnowledgeNode("doc:memo", NodeKind.ENTITY, SECRET_TITLE, (memo,)),
                ],
                [],
            )
        )
        runner.run(store.delete_document(namespace, "memo"))
        memo = self._chunk(runner, store, namespace, "memo", "Nightjar memo, rewritten.")
        runner.run(
            store.write_graph(
                namespace, [KnowledgeNode("doc:memo", NodeKind.ENTITY, "Memo", (memo,))], []
            )
        )
        nodes = runner.run(store.nodes_for_chunks(namespace, [memo, other], ENG, far_deadline()))
        # The old mention does not come back with the new node.
        assert [(n.node_id, n.supporting_chunk_ids) for n in nodes] == [("doc:memo", (memo,))]

    # --- dangling relations (item 10c) -----------------------------------------------------------
    def test_a_relation_to_a_node_not_yet_written_waits_until_the_node_exists(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        citing = self._chunk(runner, store, namespace, "art-28", "Article 28 cites article 23.")
        runner.run(
            store.write_graph(
                namespace,
                [KnowledgeNode("article:28", NodeKind.ENTITY, "Article 28", (citing,))],
                [Relation("article:28", "article:23", "REFERENCES", (citing,))],
            )
        )
        policy = ExpansionPolicy(max_hops=1)
        waiting = runner.run(store.expand(namespace, {citing: 1.0}, ENG, policy, far_deadline()))
        assert (waiting.expansions, waiting.withheld) == ((), 0)

        cited = self._chunk(runner, store, namespace, "art-23", "Article 23 restriction.")
        runner.run(
            store.write_graph(
                namespace,
                [KnowledgeNode("article:23", NodeKind.ENTITY, "Article 23", (cited,))],
                [],
            )
        )
        walked = runner.run(store.expand(namespace, {citing: 1.0}, ENG, policy, far_deadline()))
        assert [e.chunk_id for e in walked.expansions] == [cited]
        assert [s.id for s in walked.expansions[0].path] == [
            citing,
            "article:28",
            "article:23",
            cited,
        ]

        runner.run(store.delete_document(namespace, "art-23"))
        again = runner.run(store.expand(namespace, {citing: 1.0}, ENG, policy, far_deadline()))
        assert (again.expansions, again.withheld) == ((), 0)
