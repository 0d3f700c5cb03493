"""The static half of the Text2Cypher guard: pure checks on a generated statement.

A statement passes only if, on its tokens (see :mod:`.lexer`):

1. it is one statement (a trailing ``;`` is dropped, any other ``;`` rejects it) and starts
   with a reading clause (``MATCH``, ``OPTIONAL MATCH``, ``WITH``, ``UNWIND``, ``CALL``,
   ``RETURN``);
2. no unquoted word is a writing, schema, admin or I/O keyword (``CREATE``, ``MERGE``,
   ``SET``, ``DELETE``, ``REMOVE``, ``DROP``, ``LOAD CSV``, ``FOREACH``, ``USE``, ``SHOW``,
   ``GRANT``, ``IN TRANSACTIONS``, ``PERIODIC``, ``PROFILE``, ...); a word right after ``.``
   is a property key and exempt;
3. every ``CALL name`` names an allow-listed procedure, every ``name(`` an allow-listed
   function (backtick quoting and case are normalised first); ``CALL {}`` / ``CALL () {}``
   subqueries are allowed, their contents checked like the rest;
4. it uses no parameter except the ones graphctx supplies, and no top-level ``UNION``;
5. it stays inside the resource bounds of :mod:`.bounds` (no ``reduce``, no comprehensions,
   no nested iteration, literal and small ``range`` bounds, literal size caps, bounded
   variable-length paths, ``+`` only with a number literal): Neo4j's transaction timeout and
   memory limits do not stop an expression that loops or grows inside one row;
6. it ends in a LIMIT no larger than the cap: a larger one is lowered, a missing one added.

The statement that runs is the guarded text (comments removed), so the server executes
exactly what was checked. The server-side half (``EXPLAIN`` must classify it read-only, a
READ transaction with a timeout) and the namespace/visibility binding (only Chunk ids leave,
re-fetched through the scoped store path) live in :mod:`.retriever`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphctx.retrieve.text2cypher.bounds import check_bounds
from graphctx.retrieve.text2cypher.lexer import LexError, Token, TokenKind, strip_comments, tokenize

__all__ = [
    "ALLOWED_FUNCTIONS",
    "ALLOWED_PROCEDURES",
    "FORBIDDEN_KEYWORDS",
    "MAX_STATEMENT_CHARS",
    "GuardPolicy",
    "GuardedStatement",
    "Rejection",
    "guard_statement",
]

MAX_STATEMENT_CHARS = 4_000
MAX_TOKENS = 1_000

FORBIDDEN_KEYWORDS = frozenset(
    {
        # writes
        "create", "merge", "set", "delete", "detach", "remove", "foreach", "insert",
        # I/O and batching
        "load", "csv", "periodic", "transactions", "concurrent", "commit", "import",
        # schema, admin, security, multi-database
        "drop", "alter", "rename", "grant", "deny", "revoke", "show", "use", "start", "stop",
        "terminate", "enable", "deallocate", "reallocate", "dryrun", "user", "users", "role",
        "roles", "password", "privilege", "privileges", "database", "databases", "alias",
        "aliases", "server", "servers", "constraint", "constraints", "index", "indexes",
        # statement prefixes and transaction control
        "explain", "profile", "cypher", "begin", "rollback", "finish",
    }
)  # fmt: skip

ALLOWED_PROCEDURES = frozenset({"db.index.fulltext.querynodes"})

# What evidence retrieval needs: predicates, aggregates, accessors, conversions of scalars.
# Left out on purpose: reduce (a loop no timeout interrupts), replace and split (a value that
# grows with every WITH), normalize, tail and the apoc.* / plugin namespaces. ``range`` is
# allowed only with small literal bounds (see .bounds).
ALLOWED_FUNCTIONS = frozenset(
    {
        "abs", "all", "allshortestpaths", "any", "avg", "btrim", "ceil", "char_length",
        "character_length", "coalesce", "collect", "count", "date", "datetime", "duration",
        "elementid", "endnode", "exists", "floor", "head", "id", "isempty", "isnan", "keys",
        "labels", "last", "left", "length", "localdatetime", "localtime", "lower", "ltrim",
        "max", "min", "nodes", "none", "nullif", "percentilecont", "percentiledisc",
        "properties", "range", "relationships", "reverse", "right", "round", "rtrim",
        "shortestpath", "sign", "single", "size", "sqrt", "startnode", "stdev", "stdevp",
        "substring", "sum", "time", "toboolean", "tobooleanornull", "tofloat",
        "tofloatornull", "tointeger", "tointegerornull", "tolower", "tostring",
        "tostringornull", "toupper", "trim", "type", "upper", "valuetype",
        "vector.similarity.cosine", "vector.similarity.euclidean",
    }
)  # fmt: skip

# Keywords that may be followed by "(" without being a function call.
_NOT_FUNCTIONS = frozenset(
    {
        "match", "optional", "where", "and", "or", "xor", "not", "in", "return", "with",
        "distinct", "unwind", "when", "then", "else", "case", "by", "skip", "limit", "offset",
        "contains", "call", "as", "is", "shortest", "groups", "elements", "union",
        "yield", "filter", "let",
    }
)  # fmt: skip

_FIRST_KEYWORDS = frozenset({"match", "optional", "with", "unwind", "call", "return"})
_NAME_KINDS = (TokenKind.IDENT, TokenKind.QUOTED)


@dataclass(frozen=True)
class GuardPolicy:
    max_rows: int = 25
    procedures: frozenset[str] = ALLOWED_PROCEDURES
    functions: frozenset[str] = ALLOWED_FUNCTIONS
    parameters: frozenset[str] = frozenset({"namespace", "scopes"})


@dataclass(frozen=True)
class GuardedStatement:
    text: str  # what runs: comments removed, LIMIT enforced
    limit: int
    limit_added: bool


@dataclass(frozen=True)
class Rejection:
    code: str  # machine readable: e.g. forbidden_keyword, procedure_not_allowed
    detail: str  # the offending word or name, for the stage report and logs

    def __str__(self) -> str:
        return f"{self.code}:{self.detail}" if self.detail else self.code


def guard_statement(statement: str, policy: GuardPolicy) -> GuardedStatement | Rejection:
    """Accept ``statement`` (rewritten as described in the module docstring) or say why not."""
    if len(statement) > MAX_STATEMENT_CHARS:
        return Rejection("too_long", str(len(statement)))
    try:
        tokens = tokenize(statement)
    except LexError as exc:
        return Rejection("unlexable", str(exc))
    while tokens and tokens[-1].value == ";" and tokens[-1].kind is TokenKind.PUNCT:
        tokens.pop()
    if not tokens:
        return Rejection("empty", "")
    if len(tokens) > MAX_TOKENS:
        return Rejection("too_long", f"{len(tokens)} tokens")
    rejection = (
        _first_clause(tokens)
        or _single_statement(tokens)
        or _keywords(tokens)
        or _calls(tokens, policy)
        or _parameters(tokens, policy)
        or _top_level_union(tokens)
        or _within_bounds(tokens)
    )
    if rejection is not None:
        return rejection
    return _bounded(strip_comments(statement, tokens), tokens, policy.max_rows)


def _first_clause(tokens: Sequence[Token]) -> Rejection | None:
    first = tokens[0]
    if first.kind is TokenKind.IDENT and first.value in _FIRST_KEYWORDS:
        return None
    return Rejection("not_a_query", first.value[:40])


def _single_statement(tokens: Sequence[Token]) -> Rejection | None:
    if any(t.kind is TokenKind.PUNCT and t.value == ";" for t in tokens):
        return Rejection("multiple_statements", ";")
    return None


def _keywords(tokens: Sequence[Token]) -> Rejection | None:
    for index, token in enumerate(tokens):
        if token.kind is not TokenKind.IDENT or token.value not in FORBIDDEN_KEYWORDS:
            continue
        if _after_member_dot(tokens, index):
            continue  # a property key (c.index), not a clause
        return Rejection("forbidden_keyword", token.value)
    return None


def _qualified_name(tokens: Sequence[Token], start: int) -> tuple[str, int] | None:
    """A dotted name starting at ``start`` (quoted parts included): (lower-cased, end index)."""
    if start >= len(tokens) or tokens[start].kind not in _NAME_KINDS:
        return None
    parts = [tokens[start].value]
    end = start + 1
    while (
        end + 1 < len(tokens)
        and _is_punct(tokens[end], ".")
        and tokens[end + 1].kind in _NAME_KINDS
    ):
        parts.append(tokens[end + 1].value)
        end += 2
    return ".".join(parts).lower(), end


def _calls(tokens: Sequence[Token], policy: GuardPolicy) -> Rejection | None:
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind is TokenKind.IDENT and token.value == "call":
            after = tokens[index + 1] if index + 1 < len(tokens) else None
            if after is not None and after.kind is TokenKind.PUNCT and after.value in "({":
                index += 1  # a subquery; its contents are checked like everything else
                continue
            named = _qualified_name(tokens, index + 1)
            if named is None:
                return Rejection("procedure_not_allowed", "")
            if named[0] not in policy.procedures or _has_escape(tokens, index + 1, named[1]):
                return Rejection("procedure_not_allowed", named[0][:80])
            index = named[1]
            continue
        if token.kind in _NAME_KINDS and not (index and _is_punct(tokens[index - 1], ".")):
            named = _qualified_name(tokens, index)
            if named is not None:
                name, end = named
                if end < len(tokens) and _is_punct(tokens[end], "("):
                    plain_keyword = end == index + 1 and token.kind is TokenKind.IDENT
                    if not (plain_keyword and token.value in _NOT_FUNCTIONS) and (
                        name not in policy.functions or _has_escape(tokens, index, end)
                    ):
                        return Rejection("function_not_allowed", name[:80])
                index = end
                continue
        index += 1
    return None


def _has_escape(tokens: Sequence[Token], start: int, end: int) -> bool:
    """A quoted name part holding a backslash or dot is never trusted as an allowed name."""
    return any(
        t.kind is TokenKind.QUOTED and ("\\" in t.value or "." in t.value)
        for t in tokens[start:end]
    )


def _parameters(tokens: Sequence[Token], policy: GuardPolicy) -> Rejection | None:
    for token in tokens:
        if token.kind is TokenKind.PARAM and token.value not in policy.parameters:
            return Rejection("unknown_parameter", token.value[:40])
    return None


def _top_level(tokens: Sequence[Token]) -> list[tuple[int, Token]]:
    depth, found = 0, []
    for index, token in enumerate(tokens):
        if token.kind is TokenKind.PUNCT and token.value in "([{":
            depth += 1
        elif token.kind is TokenKind.PUNCT and token.value in ")]}":
            depth -= 1
        elif depth == 0:
            found.append((index, token))
    return found


def _top_level_union(tokens: Sequence[Token]) -> Rejection | None:
    for _, token in _top_level(tokens):
        if token.kind is TokenKind.IDENT and token.value == "union":
            return Rejection("union", "")
    return None


def _within_bounds(tokens: Sequence[Token]) -> Rejection | None:
    violation = check_bounds(tokens)
    return None if violation is None else Rejection(violation.code, violation.detail[:80])


def _bounded(text: str, tokens: Sequence[Token], cap: int) -> GuardedStatement:
    """Cap a final ``LIMIT <integer>``; add ``LIMIT cap`` when the statement has none."""
    last, before = tokens[-1], tokens[-2] if len(tokens) > 1 else None
    if (
        before is not None
        and before.kind is TokenKind.IDENT
        and before.value == "limit"
        and last.kind is TokenKind.NUMBER
        and last.value.isdigit()
    ):
        limit = min(int(last.value), cap)
        head = text[: len(text) - len(last.value)]
        return GuardedStatement(f"{head}{limit}", limit, limit_added=False)
    return GuardedStatement(f"{text}\nLIMIT {cap}", cap, limit_added=True)


def _after_member_dot(tokens: Sequence[Token], index: int) -> bool:
    """True when ``tokens[index]`` follows ``name.`` / ``).`` / ``].`` / ``}.`` (a key)."""
    if index < 2 or not _is_punct(tokens[index - 1], "."):
        return False
    owner = tokens[index - 2]
    return owner.kind in (*_NAME_KINDS, TokenKind.PARAM) or (
        owner.kind is TokenKind.PUNCT and owner.value in ")]}"
    )


def _is_punct(token: Token, value: str) -> bool:
    return token.kind is TokenKind.PUNCT and token.value == value
