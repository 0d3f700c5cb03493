"""Coverage-guided fuzzing of the Text2Cypher lexer and guard.

Any input: the lexer returns tokens or raises ``LexError``; the guard returns a verdict and
never raises; an accepted statement re-lexes, passes the guard again unchanged, and holds no
write, I/O or admin keyword as code and no procedure outside the allow-list.
Run: ``python tools/fuzz/fuzz_cypher_guard.py -max_total_time=60``.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))
import yaml
from harness import instrumented, run

lexer, _bounds, guard = instrumented(
    "graphctx.retrieve.text2cypher.lexer",
    "graphctx.retrieve.text2cypher.bounds",
    "graphctx.retrieve.text2cypher.guard",
)
LexError, TokenKind, tokenize = lexer.LexError, lexer.TokenKind, lexer.tokenize
GuardedStatement, Rejection = guard.GuardedStatement, guard.Rejection
guard_statement = guard.guard_statement
POLICY = guard.GuardPolicy(max_rows=25)
CORPORA = Path(__file__).resolve().parents[2] / "tests/integration"
ATTACKS = (CORPORA / "test_text2cypher_attacks.yaml", CORPORA / "test_text2cypher_dos.yaml")
NEVER_AS_CODE = frozenset(
    {"create", "merge", "set", "delete", "detach", "remove", "foreach", "insert", "load",
     "drop", "alter", "grant", "deny", "revoke", "transactions", "periodic", "profile"}
)  # fmt: skip


def test_one_input(data: bytes) -> None:
    statement = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(len(data))
    with contextlib.suppress(LexError):  # the one error the lexer may raise
        tokenize(statement)
    verdict = guard_statement(statement, POLICY)
    if isinstance(verdict, Rejection):
        return
    if not isinstance(verdict, GuardedStatement):
        raise AssertionError(f"the guard returned {verdict!r}")
    tokens = tokenize(verdict.text)
    for index, token in enumerate(tokens):
        after_dot = index > 0 and tokens[index - 1].value == "."
        if token.kind is TokenKind.IDENT and token.value in NEVER_AS_CODE and not after_dot:
            raise AssertionError(f"accepted {token.value!r} as code: {verdict.text!r}")
    again = guard_statement(verdict.text, POLICY)
    if not isinstance(again, GuardedStatement) or again.text != verdict.text:
        raise AssertionError(f"the guarded text does not pass as is: {verdict.text!r}")


def seeds() -> list[bytes]:
    cases = [case for path in ATTACKS for case in yaml.safe_load(path.read_text("utf-8"))]
    benign = "MATCH (c:Chunk) WHERE c.namespace = $namespace RETURN c.chunk_id AS chunk_id"
    return [benign.encode(), *(case["cypher"].encode() for case in cases)]


if __name__ == "__main__":
    run("cypher_guard", test_one_input, seeds())
