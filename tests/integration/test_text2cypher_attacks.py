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
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml
from text2cypher_world import (
    STATEMENT_HASH_REASON,
    World,
    ask,
    observable,
    text2cypher_world,
)

from graphctx.contract import UnanswerableReason
from graphctx.embed import Embedder
from graphctx.errors import InvalidRequestError
from graphctx.store.neo4j import Neo4jGraphStore

pytestmark = pytest.mark.neo4j

CORPUS = Path(__file__).with_suffix(".yaml")


@pytest.fixture(scope="module")
def world(neo4j_server: Any, embedder: Embedder) -> Iterator[World]:
    with text2cypher_world(neo4j_server, embedder) as opened:
        yield opened


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


FOUND_NOTHING = (
    "MATCH (c:Chunk {namespace: $namespace}) WHERE c.text CONTAINS 'no such words' RETURN c"
)


def refused_before_running(caplog: pytest.LogCaptureFixture) -> set[str]:
    """Trace ids of the requests whose statement the guard or EXPLAIN refused (operator log)."""
    return {
        str(getattr(record, "trace_id", ""))
        for record in caplog.records
        if record.name == "graphctx.text2cypher"
        and record.getMessage().startswith("text2cypher statement rejected")
    }


# --- attacks ---------------------------------------------------------------------------------
def test_no_statement_of_the_attack_corpus_executes_and_the_database_is_unchanged(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    corpus = load_corpus(world.llm.canary)
    nothing = observable(ask(world, "found-nothing", FOUND_NOTHING))
    before = database_checksum(world.server)
    caplog.set_level(logging.WARNING, logger="graphctx.text2cypher")
    answers = {}
    for index, (case, statement) in enumerate(corpus):
        answer = f"```cypher\n{statement}\n```" if index % 2 else statement
        answers[case] = observable(ask(world, case, answer))
    after = database_checksum(world.server)
    assert len(corpus) >= 100
    assert answers == dict.fromkeys(answers, nothing)
    assert refused_before_running(caplog) == {f"t2c-{case}" for case, _ in corpus}
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


def test_an_oversized_limit_is_capped(world: World, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="graphctx.text2cypher")
    response = ask(world, "limit", "MATCH (c:Chunk {namespace: $namespace}) RETURN c LIMIT 100000")
    ran = "MATCH (c:Chunk {namespace: $namespace}) RETURN c LIMIT 10"
    logged = [
        getattr(record, "guarded_sha256", None)
        for record in caplog.records
        if getattr(record, "trace_id", None) == "t2c-limit"
    ]
    assert response.answerable
    assert logged == [hashlib.sha256(ran.encode()).hexdigest()]


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


# --- what a caller can learn from a statement's outcome (issue 13, item 2) ---------------------
def returned_strings(*values: str) -> str:
    return "UNWIND [" + ", ".join(f"'{v}'" for v in values) + "] AS x RETURN x AS chunk_id"


def junk(count: int) -> list[str]:
    return [f"hidden-guess-{i}" for i in range(count)]


def test_strings_that_are_not_visible_chunk_ids_change_no_response_field(world: World) -> None:
    """The old run stage counted every distinct string: ~4.7 bits per request."""
    nothing = observable(ask(world, "nothing", FOUND_NOTHING))
    visible = observable(ask(world, "visible", returned_strings("public@1#0")))
    answers = {
        **{
            f"junk-{count}": observable(ask(world, f"junk-{count}", returned_strings(*junk(count))))
            for count in (1, 4, 9)
        },
        "hidden-chunk-ids": observable(
            ask(
                world,
                "hidden-chunk-ids",
                "MATCH (d:Document {document_id: 'secret'})-[:HAS_CHUNK]->(c) "
                "RETURN c.chunk_id AS chunk_id",
            )
        ),
        "other-namespace": observable(
            ask(world, "other-ns", "MATCH (c:Chunk) WHERE c.namespace <> $namespace RETURN c")
        ),
    }
    padded = {
        count: observable(
            ask(world, f"padded-{count}", returned_strings(*junk(count), "public@1#0"))
        )
        for count in (1, 8)
    }
    assert answers == dict.fromkeys(answers, nothing)
    assert padded == dict.fromkeys(padded, visible)


def test_a_refused_a_failed_and_an_empty_statement_answer_alike(world: World) -> None:
    """One answer for "rejected" and "found nothing": no bit from the guard, the server's
    planner or a runtime error that a hidden value triggers."""
    hidden_id_has_six_letters = (
        "MATCH (d:Document {namespace: $namespace}) WHERE d.document_id STARTS WITH 'sec' "
        "RETURN 1 / (size(d.document_id) - {n}) AS chunk_id"
    )
    cases = {
        "refused-by-guard": "MATCH (c:Chunk) SET c.x = 1 RETURN c",
        "refused-by-planner": "MATCH (c:Chunk) RETURN undefined_variable AS chunk_id",
        "failed-when-hidden-is-true": hidden_id_has_six_letters.replace("{n}", "6"),
        "ran-when-hidden-is-false": hidden_id_has_six_letters.replace("{n}", "7"),
        "declined": "NO_QUERY",
        "found-nothing": FOUND_NOTHING,
    }
    answers = {case: observable(ask(world, case, statement)) for case, statement in cases.items()}
    assert answers["found-nothing"]["reason"] == UnanswerableReason.NO_EVIDENCE.value
    assert answers == dict.fromkeys(answers, answers["found-nothing"])


def test_the_statements_row_order_never_changes_the_bundle(world: World) -> None:
    ids = ("public@1#1", "secret@1#0", "public@1#0")
    forward = ask(world, "order-forward", returned_strings(*ids), scopes=("eng", "hr"))
    backward = ask(world, "order-backward", returned_strings(*ids[::-1]), scopes=("eng", "hr"))
    assert sorted(item.chunk_id for item in forward.items) == sorted(ids)
    assert observable(forward) == observable(backward)


def test_the_statement_hash_depends_on_the_statement_text_alone(world: World) -> None:
    statements = {
        "hash-refused": "MATCH (c:Chunk) SET c.x = 1 RETURN c",
        "hash-empty": FOUND_NOTHING,
        "hash-capped": "MATCH (c:Chunk {namespace: $namespace}) RETURN c LIMIT 100000",
    }
    reasons = {
        case: [
            r
            for r in ask(world, case, statement).manifest.route.reasons
            if r.startswith("text2cypher:")
        ]
        for case, statement in statements.items()
    }
    assert reasons == {
        case: [STATEMENT_HASH_REASON + hashlib.sha256(statement.encode()).hexdigest()]
        for case, statement in statements.items()
    }


def test_only_short_id_strings_cross_the_wire_whatever_the_statement_builds(
    world: World,
) -> None:
    """A value that shares itself 2^40 times is tiny in the server and endless on the wire:
    the server-side projection sends ids only, so graphctx never receives it."""
    doubling = "WITH 1 AS s " + " ".join(["WITH [s, s] AS s"] * 40) + " RETURN s AS chunk_id"
    started = time.monotonic()
    endless = ask(world, "self-sharing-list", doubling)
    elapsed = time.monotonic() - started
    listed = ask(
        world,
        "list-of-chunks",
        "MATCH (c:Chunk {namespace: $namespace}) WITH collect(c) AS cs RETURN cs",
    )
    nothing = observable(ask(world, "nothing-again", FOUND_NOTHING))
    assert (observable(endless), elapsed < 15.0) == (nothing, True)
    assert sorted(item.chunk_id for item in listed.items) == ["public@1#0", "public@1#1"]
