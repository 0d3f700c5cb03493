"""Guarded Text2Cypher on a real Neo4j server, with the LLM mocked only at the HTTP boundary.

A local server speaks the OpenAI chat protocol and answers with recorded statements: the
attack corpus (test_text2cypher_attacks.yaml) and benign reads. Attacks must never execute
(the database checksum, its schema and its users are unchanged, and the SSRF canary is never
called); benign reads must return evidence only from documents the caller may see.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml
from fake_chat import FakeChatServer

from graphctx.context import default_token_counter
from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    NodeKind,
    RetrievalMode,
    UnanswerableReason,
)
from graphctx.embed import Embedder
from graphctx.errors import InvalidRequestError
from graphctx.ingest.extract.chat import OpenAICompatibleChat
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.retrieve.text2cypher import Text2CypherConfig
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.records import KnowledgeNode, Relation
from graphctx.testing.fixtures import make_document, paragraphs

pytestmark = pytest.mark.neo4j

CORPUS = Path(__file__).with_suffix(".yaml")
CASE_MARK = re.compile(r"\[case:([A-Za-z0-9_.-]+)\]")
PUBLIC_TEXT = (
    "Zorblax Kafka carries the shipment events.\n\nThe order API times out after three seconds."
)
SECRET_TEXT = "Zorblax Kafka salary bands for the platform team are confidential."
OTHER_TEXT = "Zorblax Kafka runs in another tenant entirely."


class RecordedLLM(FakeChatServer):
    """Answers from ``answers`` by the question's case mark (HTTP 500 for ``fail`` or no
    mark); any other path is a canary that counts requests (SSRF must never reach it)."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}
        super().__init__(self._answer)

    def _answer(self, body: dict[str, Any]) -> str | None:
        match = CASE_MARK.search(body["messages"][-1]["content"])
        if match is None or match.group(1) == "fail":
            return None
        return self.answers[match.group(1)]

    @property
    def canary(self) -> str:
        return f"{self.base_url}/canary"

    @property
    def canary_hits(self) -> int:
        return self.stray_requests


@dataclass(frozen=True)
class World:
    provider: ContextProvider
    llm: RecordedLLM
    namespace: str
    other_namespace: str
    server: Any


async def _seed(store: Neo4jGraphStore, namespace: str, other: str) -> None:
    await store.open()
    try:
        for doc in (
            make_document(namespace, "public", PUBLIC_TEXT, {"eng"}),
            make_document(namespace, "secret", SECRET_TEXT, {"hr"}),
            make_document(other, "elsewhere", OTHER_TEXT, {"eng"}),
        ):
            await store.write_document(doc, paragraphs(doc.text), "test")
        nodes = [
            KnowledgeNode("kafka", NodeKind.ENTITY, "Kafka", ("public@1#0",)),
            KnowledgeNode("order-api", NodeKind.ENTITY, "Order API", ("public@1#1",)),
            KnowledgeNode("salary", NodeKind.CONCEPT, "Salary bands", ("secret@1#0",)),
        ]
        relations = [
            Relation("order-api", "kafka", "DEPENDS_ON", ("public@1#1",)),
            Relation("kafka", "salary", "FUNDS_SECRETLY", ("secret@1#0",)),
        ]
        await store.write_graph(namespace, nodes, relations)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def world(neo4j_server: Any, embedder: Embedder) -> Iterator[World]:
    namespace, other = "t2c" + uuid.uuid4().hex[:10], "t2c" + uuid.uuid4().hex[:10]
    location = (neo4j_server.uri, neo4j_server.auth, neo4j_server.database)
    asyncio.run(_seed(Neo4jGraphStore(*location), namespace, other))
    with RecordedLLM() as llm:
        chat = OpenAICompatibleChat(f"{llm.base_url}/v1", "recorded", max_retries=0)
        provider = ContextProvider(
            Neo4jGraphStore(*location),
            embedder,
            default_token_counter(),
            CallerAssertedGrants(),
            text2cypher=Text2CypherConfig(llm=chat, enabled=True, max_rows=10),
        )
        with provider.open():
            yield World(provider, llm, namespace, other, neo4j_server)


def ask(
    world: World, case: str, answer: str, scopes: tuple[str, ...] = ("eng",)
) -> ContextResponse:
    world.llm.answers[case] = answer
    request = ContextRequest(
        query=f"Which chunks talk about Kafka? [case:{case}]",
        principal_id="agent",
        allowed_scopes=list(scopes),
        namespace=world.namespace,
        retrieval_mode=RetrievalMode.TEXT2CYPHER,
        timeout_ms=20_000,
    )
    return world.provider.retrieve(request)


# --- database checksum -----------------------------------------------------------------------
_CHECKSUM_READS = {
    "nodes": "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS p "
    "ORDER BY id",
    "relationships": "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, type(r) AS type, "
    "elementId(a) AS a, elementId(b) AS b, properties(r) AS p ORDER BY id",
    "indexes": "SHOW INDEXES YIELD name, type, labelsOrTypes, properties RETURN * ORDER BY name",
    "constraints": "SHOW CONSTRAINTS YIELD name, type RETURN * ORDER BY name",
}
_SYSTEM_READS = {
    "users": "SHOW USERS YIELD user, suspended RETURN * ORDER BY user",
    "databases": "SHOW DATABASES YIELD name, requestedStatus RETURN * ORDER BY name",
}


def database_checksum(server: Any) -> dict[str, Any]:
    """Counts and a hash of every node, relationship, index, constraint, user and database."""
    summary: dict[str, Any] = {}
    with neo4j.GraphDatabase.driver(server.uri, auth=server.auth) as driver:
        for database, reads in ((server.database, _CHECKSUM_READS), ("system", _SYSTEM_READS)):
            for name, query in reads.items():
                records, _, _ = driver.execute_query(query, database_=database)
                rows = [record.data() for record in records]
                blob = json.dumps(rows, sort_keys=True, default=str).encode()
                summary[name] = (len(rows), hashlib.sha256(blob).hexdigest())
    return summary


def load_corpus(canary: str) -> list[tuple[str, str]]:
    cases = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return [(case["id"], case["cypher"].replace("{canary}", canary)) for case in cases]


def outcome(response: ContextResponse) -> tuple[bool, UnanswerableReason | None, bool]:
    """(answerable, reason, whether a statement ran)."""
    ran = any(stage.stage == "text2cypher.run" for stage in response.manifest.stages)
    return response.answerable, response.reason, ran


# --- attacks ---------------------------------------------------------------------------------
def test_no_statement_of_the_attack_corpus_executes_and_the_database_is_unchanged(
    world: World,
) -> None:
    corpus = load_corpus(world.llm.canary)
    before = database_checksum(world.server)
    results = {}
    for index, (case, statement) in enumerate(corpus):
        answer = f"```cypher\n{statement}\n```" if index % 2 else statement
        results[case] = outcome(ask(world, case, answer))
    after = database_checksum(world.server)
    rejected = (False, UnanswerableReason.CYPHER_REJECTED, False)
    assert len(corpus) >= 100
    assert results == dict.fromkeys(results, rejected)
    assert (after, world.llm.canary_hits) == (before, 0)


WRITES_FOR_THE_SERVER_LAYER = [
    "CREATE (:Intruder) RETURN 1",
    "MATCH (c:Chunk) SET c.text = 'x' RETURN c",
    "MATCH (c:Chunk) DETACH DELETE c",
    "MERGE (i:Intruder {name: 'x'}) RETURN i",
    "CALL () { CREATE (:Intruder) } RETURN 1",
    "CREATE INDEX intruder_index IF NOT EXISTS FOR (i:Intruder) ON (i.name)",
    "CALL db.createLabel('Intruder')",
    "SHOW USERS",
]


def test_the_server_layer_alone_never_classifies_a_write_as_read_only(
    neo4j_runner: asyncio.Runner, neo4j_store: Neo4jGraphStore, world: World
) -> None:
    """Defence in depth: EXPLAIN in a READ transaction, without the static guard in front."""
    before = database_checksum(world.server)
    verdicts = {}
    for statement in WRITES_FOR_THE_SERVER_LAYER:
        try:
            query_type, _ = neo4j_runner.run(
                neo4j_store.explain_read(statement, {}, time.monotonic() + 30.0)
            )
            verdicts[statement] = query_type
        except InvalidRequestError as exc:
            verdicts[statement] = exc.code
    assert not [s for s, verdict in verdicts.items() if verdict == "r"], verdicts
    assert database_checksum(world.server) == before


# --- benign statements: only visible evidence --------------------------------------------------
def test_a_benign_match_over_chunks_returns_evidence_only_from_visible_documents(
    world: World,
) -> None:
    response = ask(
        world,
        "benign",
        "```cypher\nMATCH (c:Chunk {namespace: $namespace})\n"
        "WHERE c.text CONTAINS 'Kafka'\nRETURN c\n```",
    )
    assert (response.answerable, [i.document_id for i in response.items]) == (True, ["public"])
    assert response.items[0].chunk_id == "public@1#0"
    assert [s.stage for s in response.manifest.stages] == [
        "text2cypher.schema",
        "text2cypher.llm",
        "text2cypher.guard",
        "text2cypher.run",
        "fetch+freshness",
        "pack+gate",
    ]


def test_a_statement_that_ignores_the_namespace_still_returns_only_visible_chunks(
    world: World,
) -> None:
    response = ask(
        world,
        "unbound",
        "MATCH (c:Chunk) WHERE c.text CONTAINS 'Zorblax'"
        " RETURN c.chunk_id AS chunk_id, c.text AS t",
    )
    assert [(i.document_id, i.chunk_id) for i in response.items] == [("public", "public@1#0")]


def test_a_statement_aimed_at_a_hidden_document_finds_nothing(world: World) -> None:
    response = ask(
        world,
        "hidden",
        "MATCH (d:Document {namespace: $namespace, document_id: 'secret'})-[:HAS_CHUNK]->(c)"
        " RETURN c",
    )
    assert (response.answerable, response.reason, response.items) == (
        False,
        UnanswerableReason.NO_EVIDENCE,
        [],
    )


def test_rows_without_chunks_carry_no_data_out(world: World) -> None:
    response = ask(world, "no-chunks", "MATCH (d:Document) RETURN d.text AS text, d.scopes AS s")
    assert (response.answerable, response.reason) == (False, UnanswerableReason.NO_EVIDENCE)


def test_the_same_statement_returns_hidden_chunks_only_to_a_principal_who_may_see_them(
    world: World,
) -> None:
    statement = "MATCH (c:Chunk {namespace: $namespace}) WHERE c.text CONTAINS 'Kafka' RETURN c"
    response = ask(world, "hr", statement, scopes=("eng", "hr"))
    assert sorted(i.document_id for i in response.items) == ["public", "secret"]


def test_an_oversized_limit_is_capped(world: World) -> None:
    response = ask(world, "limit", "MATCH (c:Chunk {namespace: $namespace}) RETURN c LIMIT 100000")
    ran = "MATCH (c:Chunk {namespace: $namespace}) RETURN c LIMIT 10"
    digest = hashlib.sha256(ran.encode()).hexdigest()
    assert response.answerable
    assert f"text2cypher: guarded statement sha256 {digest}" in response.manifest.route.reasons


def test_the_prompt_carries_the_visible_schema_and_the_question_but_no_data(
    world: World,
) -> None:
    ask(world, "prompt", "MATCH (c:Chunk {namespace: $namespace}) RETURN c")
    body = next(r for r in world.llm.requests if "[case:prompt]" in r["messages"][-1]["content"])
    system, user = (m["content"] for m in body["messages"])
    assert "(:Chunk {namespace, chunk_id" in system
    assert "DEPENDS_ON" in system
    leaked = [s for s in ("FUNDS_SECRETLY", "Zorblax", "salary", world.namespace) if s in system]
    assert (leaked, user) == ([], "Question: Which chunks talk about Kafka? [case:prompt]")


def test_an_llm_that_fails_or_declines_yields_a_reason_not_an_exception(world: World) -> None:
    failed = ask(world, "fail", "unused")
    declined = ask(world, "declined", "NO_QUERY")
    assert (failed.reason, declined.reason) == (
        UnanswerableReason.LLM_UNAVAILABLE,
        UnanswerableReason.NO_EVIDENCE,
    )
