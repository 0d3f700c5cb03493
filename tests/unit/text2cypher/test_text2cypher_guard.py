from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphctx.retrieve.text2cypher import GuardedStatement, GuardPolicy, Rejection, guard_statement
from graphctx.retrieve.text2cypher.guard import FORBIDDEN_KEYWORDS, MAX_STATEMENT_CHARS
from graphctx.retrieve.text2cypher.lexer import LexError, TokenKind, strip_comments, tokenize

POLICY = GuardPolicy(max_rows=25)


def verdict(statement: str) -> str:
    result = guard_statement(statement, POLICY)
    return result.code if isinstance(result, Rejection) else "ok"


def guarded(statement: str) -> GuardedStatement:
    result = guard_statement(statement, POLICY)
    assert isinstance(result, GuardedStatement), result
    return result


# --- lexer -----------------------------------------------------------------------------------
def test_comments_and_strings_never_become_code_tokens() -> None:
    tokens = tokenize("MATCH (c) // CREATE\n/* DELETE */ WHERE c.t = 'SET x' RETURN c")
    idents = [t.value for t in tokens if t.kind is TokenKind.IDENT]
    strings = [t.value for t in tokens if t.kind is TokenKind.STRING]
    assert (idents, strings) == (["match", "c", "where", "c", "t", "return", "c"], ["'SET x'"])


def test_backticks_are_one_name_and_keep_doubled_backticks() -> None:
    tokens = tokenize("MATCH (n:`My ``Label```) RETURN n")
    assert [t.value for t in tokens if t.kind is TokenKind.QUOTED] == ["My `Label`"]


@pytest.mark.parametrize(
    "text",
    [
        "MATCH (n) /* open",
        "RETURN 'open",
        "RETURN `open",
        "RETURN \\u0043",
        "RETURN\u00a01",
        "RETURN 1\u200b",
        "RETURN \uff23",
        "RETURN 1\x0b",
        "RETURN $",
        "RETURN 1 @ 2",
    ],
)
def test_anything_the_lexer_does_not_understand_is_an_error(text: str) -> None:
    with pytest.raises(LexError):
        tokenize(text)


def test_strip_comments_keeps_everything_but_comments() -> None:
    text = "MATCH (a)-->(b) // why\nWHERE a.x <> 'a /* b */' /* c */ RETURN b"
    assert strip_comments(text, tokenize(text)) == (
        "MATCH (a)-->(b)\nWHERE a.x <> 'a /* b */' RETURN b"
    )


@given(st.text(max_size=200))
def test_the_lexer_either_tokenizes_or_refuses_never_crashes(text: str) -> None:
    try:
        tokens = tokenize(text)
    except LexError:
        return
    assert all(0 <= t.start < t.end <= len(text) for t in tokens)


# --- guard: what passes ----------------------------------------------------------------------
def test_a_benign_read_passes_with_a_limit_added() -> None:
    result = guarded("MATCH (c:Chunk {namespace: $namespace}) RETURN c")
    assert result == GuardedStatement(
        "MATCH (c:Chunk {namespace: $namespace}) RETURN c\nLIMIT 25", 25, limit_added=True
    )


def test_a_larger_limit_is_capped_and_a_smaller_one_kept() -> None:
    assert (
        guarded("MATCH (c:Chunk) RETURN c LIMIT 1000;").text == "MATCH (c:Chunk) RETURN c LIMIT 25"
    )
    assert guarded("MATCH (c:Chunk) RETURN c LIMIT 3").limit == 3


def test_a_trailing_comment_cannot_swallow_the_added_limit() -> None:
    assert guarded("MATCH (c:Chunk) RETURN c // done").text == "MATCH (c:Chunk) RETURN c\nLIMIT 25"


@pytest.mark.parametrize(
    "statement",
    [
        "MATCH (c:Chunk)<-[:HAS_CHUNK]-(d:Document) WHERE d.is_latest RETURN c ORDER BY c.ordinal",
        "MATCH (k:Knowledge)-[:FROM_CHUNK]->(c) WHERE toLower(k.name) CONTAINS 'kafka' RETURN c",
        "MATCH (c:Chunk) WHERE EXISTS { (c)<-[:FROM_CHUNK]-() } AND COUNT { (c)--() } > 1 RETURN c",
        "OPTIONAL MATCH (c:Chunk) WITH c, size(c.text) AS n WHERE n > 0 RETURN collect(c) AS cs",
        "MATCH (c:Chunk) WHERE c.set = 1 AND c.index IS NOT NULL RETURN c",
        "MATCH (c:Chunk) WHERE c.text = 'CREATE (n); DROP INDEX x' RETURN c",
        "CALL db.index.fulltext.queryNodes('graphctx_chunk_text', 'kafka') YIELD node RETURN node",
        "MATCH (c:Chunk) CALL (c) { MATCH (c)<--(k) RETURN count(k) AS k } RETURN c, k",
        "UNWIND $scopes AS s MATCH (d:Document) WHERE s IN d.scopes RETURN d",
        "MATCH p = shortestPath((a:Knowledge)-[*..3]-(b:Knowledge)) RETURN nodes(p) AS n",
    ],
)
def test_ordinary_reads_pass(statement: str) -> None:
    assert verdict(statement) == "ok"


# --- guard: what is rejected, and why ----------------------------------------------------------
@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("CREATE (n)", "not_a_query"),
        ("SHOW USERS", "not_a_query"),
        ("EXPLAIN MATCH (n) RETURN n", "not_a_query"),
        ("MATCH (n) RETURN n; MATCH (m) RETURN m", "multiple_statements"),
        ("MATCH (n) SET n.x = 1", "forbidden_keyword"),
        ("MATCH (n) WITH n LOAD CSV FROM 'x' AS r RETURN r", "forbidden_keyword"),
        ("MATCH (n) CALL (n) { RETURN 1 AS x } IN TRANSACTIONS RETURN x", "forbidden_keyword"),
        ("MATCH (n) WITH 1. CREATE (m) RETURN m", "forbidden_keyword"),
        ("CALL dbms.components()", "procedure_not_allowed"),
        ("CALL `db`.`labels`()", "procedure_not_allowed"),
        (
            "CALL `db.index.fulltext.queryNodes`('a', 'b') YIELD node RETURN node",
            "procedure_not_allowed",
        ),
        ("MATCH (n) RETURN apoc.util.sleep(5)", "function_not_allowed"),
        ("MATCH (n) RETURN `apoc`.`util`.sleep(5)", "function_not_allowed"),
        ("MATCH (n) RETURN myPlugin(n)", "function_not_allowed"),
        ("MATCH (n) RETURN $password", "unknown_parameter"),
        ("MATCH (n) RETURN n UNION MATCH (m) RETURN m AS n", "union"),
        ("MATCH (n) RETURN '", "unlexable"),
        ("", "empty"),
        (";", "empty"),
        ("MATCH (n) RETURN n" + " " * MAX_STATEMENT_CHARS, "too_long"),
    ],
)
def test_rejections_carry_a_machine_readable_code(statement: str, code: str) -> None:
    assert verdict(statement) == code


@given(
    st.sampled_from(sorted(FORBIDDEN_KEYWORDS)),
    st.sampled_from([" ", "\n", "\t", " /* c */ ", "\r\n"]),
    st.booleans(),
)
def test_a_forbidden_keyword_is_found_in_any_case_and_spacing(
    keyword: str, space: str, upper: bool
) -> None:
    word = keyword.upper() if upper else keyword.capitalize()
    assert verdict(f"MATCH (n){space}{word}{space}(m) RETURN n") != "ok"


def test_an_allowed_procedure_can_be_widened_by_policy_only() -> None:
    statement = "CALL db.labels() YIELD label RETURN label"
    widened = GuardPolicy(procedures=frozenset({"db.labels"}))
    assert (verdict(statement), type(guard_statement(statement, widened))) == (
        "procedure_not_allowed",
        GuardedStatement,
    )
