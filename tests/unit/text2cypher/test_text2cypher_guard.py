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


# --- guard: resource bounds (issue 13, item 1) -------------------------------------------------
@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("RETURN reduce(s = 0, i IN range(1, 5) | s + i) AS n", "function_not_allowed"),
        ("RETURN `reduce`(s = 0, i IN [1] | s) AS n", "function_not_allowed"),
        ("WITH 'xx' AS s RETURN replace(s, 'x', s) AS n", "function_not_allowed"),
        ("RETURN [x IN [1, 2] | x] AS n", "list_comprehension"),
        ("RETURN [x IN $scopes WHERE x = 'a'] AS n", "list_comprehension"),
        ("MATCH (c:Chunk) RETURN [(c)<-[:HAS_CHUNK]-(d) | d] AS n", "pattern_comprehension"),
        ("RETURN any(a IN [1] WHERE any(b IN [2] WHERE a = b)) AS n", "nested_iteration"),
        (
            "RETURN all(a IN [1] WHERE EXISTS { UNWIND [2] AS b WITH b WHERE none(c IN [b] "
            "WHERE c = a) RETURN b }) AS n",
            "nested_iteration",
        ),
        ("UNWIND range(1, 101) AS i RETURN i", "range_too_large"),
        ("UNWIND range(1000, 1, -1) AS i RETURN i", "range_too_large"),
        ("UNWIND range(1, 9e18) AS i RETURN i", "range_not_literal"),
        ("UNWIND range(1, 0x10) AS i RETURN i", "range_not_literal"),
        ("WITH 5 AS n UNWIND range(1, n) AS i RETURN i", "range_not_literal"),
        ("UNWIND range(1, 10, 0) AS i RETURN i", "range_not_literal"),
        ("RETURN '" + "x" * 201 + "' AS n", "literal_too_large"),
        ("RETURN [" + ", ".join(["1"] * 101) + "] AS n", "literal_too_large"),
        ("WITH 'a' AS s RETURN s + s AS n", "operator_not_allowed"),
        ("WITH 'a' AS s RETURN s + 1 + s AS n", "operator_not_allowed"),
        ("WITH 'a' AS s RETURN s + 1 * 2 AS n", "operator_not_allowed"),
        ("MATCH p = (a)-->+(b) RETURN p", "operator_not_allowed"),
        ("MATCH p = (a)-->*(b) RETURN p", "operator_not_allowed"),
        ("MATCH p = (a) ((x)--(y))* (b) RETURN p", "operator_not_allowed"),
        ("MATCH p = (a) ((x)--(y)){1,3} (b) RETURN p", "quantified_path"),
        ("MATCH p = (a)-[*]-(b) RETURN p", "unbounded_path"),
        ("MATCH p = (a)-[:R*2..]-(b) RETURN p", "unbounded_path"),
        ("MATCH p = (a)-[*..4]-(b) RETURN p", "unbounded_path"),
        ("MATCH p = (a)-[*5]-(b) RETURN p", "unbounded_path"),
        ("MATCH (c:Chunk) RETURN c SKIP 1001", "literal_too_large"),
        ("MATCH (c:Chunk) WITH c LIMIT size($scopes) RETURN c", "limit_not_literal"),
        (
            "CALL db.index.fulltext.queryNodes('graphctx_chunk_text', '*a*') YIELD node "
            "RETURN node",
            "procedure_arguments",
        ),
        (
            "MATCH (c:Chunk) WITH c.text AS t CALL db.index.fulltext.queryNodes("
            "'graphctx_chunk_text', t) YIELD node RETURN node",
            "procedure_arguments",
        ),
        ("RETURN (1 AS n", "unbalanced"),
    ],
)
def test_statements_that_loop_grow_or_walk_without_bound_are_refused(
    statement: str, code: str
) -> None:
    assert verdict(statement) == code


@pytest.mark.parametrize(
    "statement",
    [
        "UNWIND range(1, 100) AS i RETURN i",
        "UNWIND range(10, 1, -1) AS i RETURN i",
        "MATCH (c:Chunk) WHERE c.ordinal = 2 + 1 RETURN c",
        "MATCH (a:Chunk), (b:Chunk) WHERE b.ordinal = a.ordinal + 1 RETURN b",
        "MATCH (c:Chunk) WHERE c.ordinal * 2 > 3 AND (c.ordinal - 1) * 2 < 9 RETURN c",
        "MATCH (c:Chunk) RETURN count(*) AS n",
        "MATCH (c:Chunk) WITH * RETURN c",
        "MATCH p = (a:Knowledge)-[:DEPENDS_ON*1..3]->(b) RETURN b",
        "MATCH p = (a:Knowledge)-[*2]-(b) RETURN b",
        "MATCH (c:Chunk) WHERE c.chunk_id IN ['a@1#0', 'b@1#1'] RETURN c",
        "MATCH (c:Chunk) WHERE c {.text}.text CONTAINS 'x' RETURN c",
        "MATCH (c:Chunk) RETURN c ORDER BY c.ordinal SKIP 5 LIMIT 100000",
        "MATCH (k:Knowledge)-[:A|B]->(c) RETURN c",
    ],
)
def test_the_bounded_forms_evidence_retrieval_uses_pass(statement: str) -> None:
    assert verdict(statement) == "ok"


@given(st.integers(-300, 300), st.integers(-300, 300), st.sampled_from([1, 2, 3, -1, -2]))
def test_a_literal_range_passes_exactly_when_it_has_at_most_100_items(
    start: int, stop: int, step: int
) -> None:
    items = len(range(start, stop + (1 if step > 0 else -1), step))
    assert (verdict(f"UNWIND range({start}, {stop}, {step}) AS i RETURN i") == "ok") == (
        items <= 100
    )


@given(
    st.sampled_from(["s", "c.text", "$scopes", "'x'", "[1]", "(s)", "-1", "toString(s)"]),
    st.sampled_from([" ", "", "\n", " /* c */ "]),
)
def test_a_plus_never_adds_anything_but_a_number_literal(operand: str, space: str) -> None:
    assert verdict(f"WITH 'a' AS s RETURN s{space}+{space}{operand} AS n") == (
        "operator_not_allowed"
    )
