from __future__ import annotations

from pathlib import Path

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode, UnanswerableReason
from graphctx.embed import Embedder
from graphctx.llm.port import ChatMessage
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.retrieve.text2cypher import Text2CypherConfig
from graphctx.retrieve.text2cypher.projection import project_chunk_ids, projected_chunk_ids
from graphctx.retrieve.text2cypher.prompt import build_messages, describe_schema, extract_statement
from graphctx.store.sqlite.store import SqliteGraphStore


class NeverCalled:
    def complete(self, messages: object) -> str:
        raise AssertionError("the LLM must not be called")


def test_the_first_fenced_block_is_the_statement() -> None:
    reply = "Here:\n```cypher\nMATCH (c) RETURN c\n```\nand\n```\nCREATE (n)\n```"
    assert extract_statement(reply) == "MATCH (c) RETURN c"


def test_an_unfenced_reply_is_taken_whole_and_no_query_is_none() -> None:
    assert (extract_statement("  MATCH (c) RETURN c \n"), extract_statement("NO_QUERY.")) == (
        "MATCH (c) RETURN c",
        None,
    )


def test_the_schema_lists_only_well_formed_relation_types() -> None:
    schema = describe_schema(["DEPENDS_ON", "x) CREATE (n", "REQUIRES", "DEPENDS_ON", "OWNS\n"])
    assert schema.endswith("<TYPE> is one of: DEPENDS_ON, REQUIRES")


def test_the_messages_hold_schema_rules_and_question() -> None:
    system, user = build_messages("Who owns Kafka?", describe_schema([]), 7)
    assert (system.role, user) == ("system", ChatMessage("user", "Question: Who owns Kafka?"))
    assert "At most 7 rows" in system.content
    assert "(:Document)-[:HAS_CHUNK]->(:Chunk)" in system.content


def test_only_projected_id_strings_leave_the_rows() -> None:
    rows: list[dict[str, object]] = [
        {"chunk_ids": [["a"], [], ["b", None]]},
        {"chunk_ids": [["a", "c"], "not-a-column-list", [5]]},
        {"chunk_ids": None},
        {"other": [["x"]]},
    ]
    assert projected_chunk_ids(rows) == ["a", "b", "c"]


def test_column_names_are_quoted_in_the_projection() -> None:
    text = project_chunk_ids("MATCH (c) RETURN c AS `odd``name`", ["odd`name"], 5)
    assert text.startswith("CALL () {\nMATCH (c) RETURN c AS `odd``name`\n}\nRETURN [")
    assert "[`odd``name`, 0][0] IS :: NODE" in text
    assert "[`odd``name`, 0][0][..5]" in text


def request(mode: RetrievalMode = RetrievalMode.TEXT2CYPHER) -> ContextRequest:
    return ContextRequest(
        query="which chunks mention kafka",
        principal_id="p",
        allowed_scopes=["eng"],
        retrieval_mode=mode,
    )


def test_text2cypher_is_off_by_default(provider: ContextProvider) -> None:
    response = provider.retrieve(request())
    assert (response.answerable, response.reason) == (False, UnanswerableReason.MODE_UNSUPPORTED)


def test_text2cypher_needs_a_store_that_can_run_guarded_cypher(
    tmp_path: Path, embedder: Embedder
) -> None:
    config = Text2CypherConfig(llm=NeverCalled(), enabled=True)
    provider = ContextProvider(
        SqliteGraphStore(tmp_path / "s.sqlite"),
        embedder,
        default_token_counter(),
        CallerAssertedGrants(),
        text2cypher=config,
    )
    with provider.open():
        response = provider.retrieve(request())
    assert response.reason is UnanswerableReason.MODE_UNSUPPORTED


def test_a_config_that_is_not_enabled_keeps_the_mode_off(
    tmp_path: Path, embedder: Embedder
) -> None:
    provider = ContextProvider(
        SqliteGraphStore(tmp_path / "s.sqlite"),
        embedder,
        default_token_counter(),
        CallerAssertedGrants(),
        text2cypher=Text2CypherConfig(llm=NeverCalled()),
    )
    with provider.open():
        response = provider.retrieve(request())
    assert response.reason is UnanswerableReason.MODE_UNSUPPORTED
