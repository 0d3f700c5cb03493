"""A Text2Cypher world on a real Neo4j server: seeded documents, a recorded LLM, a provider.

The LLM is mocked only at the HTTP boundary: a local server speaks the OpenAI chat protocol and
answers each question with the statement recorded for its ``[case:<id>]`` mark.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import neo4j

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, ContextResponse, NodeKind, RetrievalMode
from graphctx.embed import Embedder
from graphctx.llm.chat import OpenAICompatibleChat
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.retrieve.text2cypher import Text2CypherConfig
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.records import KnowledgeNode, Relation
from graphctx.testing.fake_chat import FakeChatServer
from graphctx.testing.fixtures import make_document, paragraphs

CASE_MARK = re.compile(r"\[case:([A-Za-z0-9_.-]+)\]")
PUBLIC_TEXT = (
    "Zorblax Kafka carries the shipment events.\n\nThe order API times out after three seconds."
)
SECRET_TEXT = "Zorblax Kafka salary bands for the platform team are confidential."
OTHER_TEXT = "Zorblax Kafka runs in another tenant entirely."
ANSWER_WITHIN_S = 5.0


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


def seconds_to_answer(server: Any) -> float:
    """How long ``RETURN 1`` takes on a new connection; infinity if the server does not answer."""
    started = time.monotonic()
    try:
        with neo4j.GraphDatabase.driver(
            server.uri, auth=server.auth, connection_timeout=ANSWER_WITHIN_S
        ) as driver:
            records, _, _ = driver.execute_query(
                neo4j.Query("RETURN 1 AS one", timeout=ANSWER_WITHIN_S),
                database_=server.database,
            )
    except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError):
        return float("inf")
    return time.monotonic() - started if records[0]["one"] == 1 else float("inf")


@contextmanager
def text2cypher_world(server: Any, embedder: Embedder) -> Iterator[World]:
    """Two documents (eng, hr) in one namespace, one in another, and a provider whose
    text2cypher LLM is the recorded one (at most 10 rows)."""
    namespace, other = "t2c" + uuid.uuid4().hex[:10], "t2c" + uuid.uuid4().hex[:10]
    location = (server.uri, server.auth, server.database)
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
            yield World(provider, llm, namespace, other, server)


def ask(
    world: World,
    case: str,
    answer: str,
    scopes: tuple[str, ...] = ("eng",),
    *,
    timeout_ms: int = 20_000,
) -> ContextResponse:
    """The response to a question whose LLM answer is ``answer`` (trace id ``t2c-<case>``)."""
    world.llm.answers[case] = answer
    request = ContextRequest(
        query=f"Which chunks talk about Kafka? [case:{case}]",
        principal_id="agent",
        allowed_scopes=list(scopes),
        namespace=world.namespace,
        retrieval_mode=RetrievalMode.TEXT2CYPHER,
        timeout_ms=timeout_ms,
        trace_id=f"t2c-{case}",
    )
    return world.provider.retrieve(request)


STATEMENT_HASH_REASON = "text2cypher: statement sha256 "


SCHEMA_STAGE = "text2cypher.schema"


def observable(response: ContextResponse) -> dict[str, Any]:
    """Everything a caller reads in a response, except timings, the trace id, the statement
    hash (a function of the statement text alone, tested on its own) and the schema stage
    (it runs before the LLM writes the statement, and times out on a loaded machine)."""
    data = response.model_dump(mode="json")
    data.pop("trace_id")
    data["limits"].pop("elapsed_ms")
    manifest = data["manifest"]
    manifest["stages"] = [s for s in manifest["stages"] if s["stage"] != SCHEMA_STAGE]
    if manifest["deadline_stage"] == SCHEMA_STAGE:
        manifest["deadline_stage"] = None
        manifest["partial"] = any(
            s["status"] in ("timed_out", "failed") for s in manifest["stages"]
        )
    for stage in manifest["stages"]:
        stage.pop("elapsed_ms")
    manifest["route"]["reasons"] = [
        r for r in manifest["route"]["reasons"] if not r.startswith(STATEMENT_HASH_REASON)
    ]
    return data
