"""The Text2Cypher guard on random token streams and mutated attacks: no crash, no write.

Accepted statements are re-checked by an oracle that reads the *guarded* text (what would
run) for the constructs the guard exists to stop; every attack of the integration corpus,
re-spelled with other case, spacing and comments, must still be rejected.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st
from profiles import fuzz_settings

from graphctx.retrieve.text2cypher import GuardedStatement, GuardPolicy, Rejection, guard_statement
from graphctx.retrieve.text2cypher.lexer import LexError, Token, TokenKind, tokenize

POLICY = GuardPolicy(max_rows=25)
CORPORA = Path(__file__).parents[1] / "integration"


def _expand(statement: str) -> str:
    """The DoS corpus's placeholders: {ones:N} (N list items), {x:N} (N letters)."""
    statement = re.sub(r"\{ones:(\d+)\}", lambda m: ", ".join(["1"] * int(m.group(1))), statement)
    return re.sub(r"\{x:(\d+)\}", lambda m: "x" * int(m.group(1)), statement)


ATTACKS: list[str] = [
    _expand(case["cypher"])
    for name in ("test_text2cypher_attacks.yaml", "test_text2cypher_dos.yaml")
    for case in yaml.safe_load((CORPORA / name).read_text("utf-8"))
]
NEVER_AS_CODE = frozenset(
    {
        "create", "merge", "set", "delete", "detach", "remove", "foreach", "insert", "load",
        "csv", "drop", "alter", "grant", "deny", "revoke", "transactions", "periodic",
        "profile", "explain", "use", "show", "terminate", "commit", "finish",
    }
)  # fmt: skip
BENIGN = (
    "MATCH (c:Chunk) WHERE c.namespace = $namespace RETURN c.chunk_id AS chunk_id",
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE any(s IN d.scopes WHERE s IN $scopes) "
    "RETURN c.chunk_id AS chunk_id LIMIT 5",
    "CALL db.index.fulltext.queryNodes('graphctx_chunk_text', 'kafka') YIELD node "
    "RETURN node.chunk_id AS chunk_id",
    "MATCH (c:Chunk) CALL (c) { MATCH (c)--(n) RETURN count(n) AS degree } "
    "RETURN c.chunk_id AS chunk_id",
)
VOCABULARY = (
    *sorted(NEVER_AS_CODE), "match", "optional", "with", "unwind", "return", "where", "call",
    "yield", "union", "all", "limit", "skip", "order", "by", "in", "and", "or", "not",
    "exists", "count", "collect", "db", "index", "fulltext", "querynodes", "apoc", "dbms",
    "load", "json", "cypher", "runmany", "c", "n", "node", "c.text", "c.set", "1", "25",
    "999999", "0x1F", "1.5e3", "'str'", "\"str\"", "'it''s'", "'\\''", "`name`", "`a``b`",
    "`apoc.load.json`", "$namespace", "$scopes", "$other", "$`x`", "(", ")", "[", "]", "{",
    "}", ",", ".", ":", ";", "=", "<", ">", "+", "-", "*", "/", "|", "->", "<-", "//c\n",
    "/* c */", "/*", "*/", "\n", "\t", "\r", "\u00a0", "\u200b", "\uff1b", "\\u0041",
)  # fmt: skip


def _oracle_violation(guarded: GuardedStatement) -> str | None:
    """What the guarded text would do that a read-only, allow-listed statement cannot."""
    tokens = tokenize(guarded.text)  # what runs must lex, or the guard checked something else
    for index, token in enumerate(tokens):
        after_dot = index > 0 and _punct(tokens[index - 1], ".")
        if token.kind is TokenKind.IDENT and token.value in NEVER_AS_CODE and not after_dot:
            return f"keyword {token.value}"
        if token.kind is TokenKind.IDENT and token.value == "call" and not after_dot:
            following = tokens[index + 1 : index + 2]
            if following and following[0].kind is TokenKind.PUNCT and following[0].value in "({":
                continue  # a subquery: its contents are checked token by token
            name = _dotted(tokens, index + 1)
            if name not in POLICY.procedures:
                return f"procedure {name}"
        if token.kind is TokenKind.PARAM and token.value not in POLICY.parameters:
            return f"parameter {token.value}"
    if not (
        len(tokens) >= 2
        and tokens[-2].value == "limit"
        and tokens[-1].kind is TokenKind.NUMBER
        and int(tokens[-1].value) <= POLICY.max_rows
    ):
        return "no final LIMIT within the cap"
    return None


def _dotted(tokens: list[Token], start: int) -> str:
    parts: list[str] = []
    index = start
    while index < len(tokens) and tokens[index].kind in (TokenKind.IDENT, TokenKind.QUOTED):
        parts.append(tokens[index].value)
        if index + 1 < len(tokens) and _punct(tokens[index + 1], "."):
            index += 2
        else:
            break
    return ".".join(parts).lower()


def _punct(token: Token, value: str) -> bool:
    return token.kind is TokenKind.PUNCT and token.value == value


def assert_safe_verdict(statement: str) -> GuardedStatement | Rejection:
    verdict = guard_statement(statement, POLICY)
    assert isinstance(verdict, GuardedStatement | Rejection)
    if isinstance(verdict, GuardedStatement):
        assert _oracle_violation(verdict) is None, (statement, verdict.text)
        again = guard_statement(verdict.text, POLICY)  # what runs passes the guard as is
        assert isinstance(again, GuardedStatement)
        assert again.text == verdict.text
    return verdict


@fuzz_settings()
@given(words=st.lists(st.sampled_from(VOCABULARY), max_size=40), joiner=st.sampled_from(" \n\t"))
def test_random_token_streams_never_crash_and_never_pass_a_write(
    words: list[str], joiner: str
) -> None:
    assert_safe_verdict(joiner.join(words))


@fuzz_settings()
@given(statement=st.text(max_size=300))
def test_arbitrary_text_never_crashes_the_guard(statement: str) -> None:
    assert_safe_verdict(statement)


def _respell(statement: str, data: st.DataObject) -> str:
    """The same statement with other letter case, spacing and comments between tokens."""
    try:
        tokens = tokenize(statement)
    except LexError:
        return statement
    separators = st.sampled_from((" ", "\n", "\t", "  ", " /* x */ ", "\r\n", "/**/", " // y\n"))
    parts: list[str] = []
    for token in tokens:
        text = statement[token.start : token.end]
        if token.kind is TokenKind.IDENT:
            flips = data.draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
            text = "".join(
                c.upper() if up else c.lower() for c, up in zip(text, flips, strict=True)
            )
        parts.append(text)
        parts.append(data.draw(separators))
    return "".join(parts)


@fuzz_settings()
@given(attack=st.sampled_from(ATTACKS), data=st.data())
def test_respelled_attacks_are_still_rejected(attack: str, data: st.DataObject) -> None:
    verdict = assert_safe_verdict(_respell(attack, data))
    assert isinstance(verdict, Rejection), attack


@fuzz_settings()
@given(
    benign=st.sampled_from(BENIGN),
    attack=st.sampled_from(ATTACKS),
    where=st.floats(0, 1),
    data=st.data(),
)
def test_attacks_spliced_into_reads_are_rejected_or_harmless(
    benign: str, attack: str, where: float, data: st.DataObject
) -> None:
    """An attack (or a piece of one) pasted at a token boundary of a benign read."""
    tokens = tokenize(benign)
    cut = tokens[int(where * (len(tokens) - 1))].start
    piece_tokens = tokenize(attack) if _lexes(attack) else []
    if piece_tokens:
        first = data.draw(st.integers(0, len(piece_tokens) - 1))
        last = data.draw(st.integers(first, len(piece_tokens) - 1))
        piece = attack[piece_tokens[first].start : piece_tokens[last].end]
    else:
        piece = attack
    assert_safe_verdict(f"{benign[:cut]} {piece} {benign[cut:]}")


def _lexes(statement: str) -> bool:
    try:
        tokenize(statement)
    except LexError:
        return False
    return True


def test_the_benign_reads_pass_so_the_splices_start_from_accepted_statements() -> None:
    assert all(isinstance(assert_safe_verdict(s), GuardedStatement) for s in BENIGN)
