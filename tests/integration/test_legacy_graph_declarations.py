"""A graph written before declarations were recorded is upgraded on open (SQLite) or by
``graphctx neo4j init`` (Neo4j): every node gets one declaration introducing all its keys and its
type through all its support, so a visibly supported name still routes and a name with a hidden
supporting chunk stays hidden (the conservative reading)."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path

import pytest

from graphctx.contract import NodeKind
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.port import GraphStore
from graphctx.store.records import KnowledgeNode
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs

KEYS = ["payment-service", "vault-secret"]


def write_graph(runner: asyncio.Runner, store: GraphStore, namespace: str) -> None:
    chunk = {}
    for doc_id, text, scopes in (
        ("svc", "payment-service handles cards", {"eng"}),
        ("memo", "vault-secret holds keys", {"hr"}),
        ("note", "vault-secret is used by payments", {"eng"}),
    ):
        document = make_document(namespace, doc_id, text, scopes)
        runner.run(store.write_document(document, paragraphs(text), "test"))
        (view,) = runner.run(store.document_chunks(namespace, doc_id))
        chunk[doc_id] = view.chunk_id
    nodes = [
        KnowledgeNode(
            "svc:pay", NodeKind.ENTITY, "payment-service", (chunk["svc"],), None, "Service"
        ),
        KnowledgeNode(
            "sys:vault",
            NodeKind.ENTITY,
            "vault-secret",
            (chunk["memo"], chunk["note"]),
            None,
            "System",
        ),
    ]
    runner.run(store.write_graph(namespace, nodes, []))


def lookup(
    runner: asyncio.Runner, store: GraphStore, namespace: str
) -> list[tuple[str, str | None]]:
    found = runner.run(
        store.lookup_entities(namespace, KEYS, frozenset({"eng"}), 10, far_deadline())
    )
    return [(m.key, m.node_type) for m in found]


def test_an_older_sqlite_file_gets_conservative_declarations_on_open(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with asyncio.Runner() as runner:
        store = SqliteGraphStore(path)
        runner.run(store.open())
        write_graph(runner, store, "legacy")
        assert lookup(runner, store, "legacy") == [("payment-service", "Service")]
        runner.run(store.close())
        with sqlite3.connect(path) as conn:  # what a file from before declarations holds
            conn.execute("DROP TABLE declaration_support")
            conn.execute("DROP TABLE node_declarations")
        store = SqliteGraphStore(path)
        runner.run(store.open())
        try:
            assert lookup(runner, store, "legacy") == [("payment-service", "Service")]
        finally:
            runner.run(store.close())


@pytest.mark.neo4j
def test_neo4j_init_gives_an_older_graph_conservative_declarations(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore
) -> None:
    namespace = "t" + uuid.uuid4().hex[:12]
    write_graph(neo4j_runner, neo4j_store, namespace)

    async def forget_declarations() -> None:  # what a database from before declarations holds
        writer = neo4j_store._require(neo4j_store._writer)
        async with writer.session(database=neo4j_store.database) as session:
            await (
                await session.run(
                    "MATCH (d:Declaration {namespace: $namespace}) DETACH DELETE d",
                    namespace=namespace,
                )
            ).consume()
            await (await session.run("DROP CONSTRAINT graphctx_declaration_id")).consume()

    neo4j_runner.run(forget_declarations())
    assert lookup(neo4j_runner, neo4j_store, namespace) == []  # fails closed until init
    report = neo4j_runner.run(neo4j_store.init_schema())
    assert "graphctx_declaration_id" in report.created
    assert lookup(neo4j_runner, neo4j_store, namespace) == [("payment-service", "Service")]
