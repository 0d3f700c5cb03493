"""Resource bounds of the Text2Cypher guard: what one statement may build, loop over or walk.

Neo4j evaluates an expression (a ``reduce``, a list comprehension, a quantifier, a string
concatenation) without checking the transaction's timeout or memory limit in between: a
three-line read statement could exhaust the heap in a second, or keep a core busy long after
the server reported the transaction terminated. No server setting stops that, so the guard
admits only the expression forms evidence retrieval needs, each with a small, literal bound:

- no list or pattern comprehension (``[x IN l | …]``, ``[x IN l WHERE …]``, ``[(a)--(b) | …]``);
- a quantifier (``any``/``all``/``none``/``single``) never inside another iteration;
- ``range`` only with integer literal arguments and at most :data:`MAX_RANGE_ITEMS` items;
- string literals of at most :data:`MAX_STRING_LITERAL_CHARS`, list literals of at most
  :data:`MAX_LIST_LITERAL_ITEMS` items;
- ``+`` only as "something plus a number literal" (no ``s + s`` doubling, no concatenation,
  no ``+`` path quantifier); ``*`` only as ``count(*)``, ``RETURN *``, a bounded
  variable-length relationship, or a multiplication;
- variable-length relationships with an upper bound of at most :data:`MAX_VARIABLE_HOPS`,
  and no quantified path patterns (``((a)--(b)){1,9}``, ``-->+``);
- ``LIMIT`` only with an integer literal (the last one is lowered to the row cap), ``SKIP``
  only with one of at most :data:`MAX_SKIP_ROWS`;
- the full-text procedure only with literal arguments and a plain-words Lucene query.

Each rule is an allow-list of forms; whatever it does not recognise is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graphctx.retrieve.text2cypher.lexer import Token, TokenKind

__all__ = [
    "MAX_LIST_LITERAL_ITEMS",
    "MAX_RANGE_ITEMS",
    "MAX_SKIP_ROWS",
    "MAX_STRING_LITERAL_CHARS",
    "MAX_VARIABLE_HOPS",
    "BoundViolation",
    "check_bounds",
]

MAX_STRING_LITERAL_CHARS = 200
MAX_LIST_LITERAL_ITEMS = 100
MAX_RANGE_ITEMS = 100
MAX_VARIABLE_HOPS = 3
MAX_SKIP_ROWS = 1_000

QUANTIFIERS = frozenset({"any", "all", "none", "single"})
FULLTEXT_PROCEDURE = "db.index.fulltext.querynodes"
_ROW_KEYWORDS = frozenset({"limit", "skip", "offset"})
_PROJECTION_STAR = frozenset({"return", "with", "distinct", "yield"})
_OPERAND_KINDS = (TokenKind.IDENT, TokenKind.QUOTED, TokenKind.NUMBER, TokenKind.PARAM)
_BINDS_TIGHTER = frozenset("*/%^.[")
_PLAIN_WORDS = re.compile(r"[\w .,-]*")
_DECIMAL = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class BoundViolation:
    code: str
    detail: str


@dataclass
class _Frame:
    opener: str  # "(", "[" or "{"
    kind: str  # "relationship", "list", "iteration", "range", "group"
    start: int  # index of the opening token


def check_bounds(tokens: Sequence[Token]) -> BoundViolation | None:
    """The first resource bound ``tokens`` break, or None."""
    return (
        _literals(tokens)
        or _brackets(tokens)
        or _plus_signs(tokens)
        or _stars(tokens)
        or _row_counts(tokens)
        or _fulltext_arguments(tokens)
    )


# --- literals ----------------------------------------------------------------------------------
def _literals(tokens: Sequence[Token]) -> BoundViolation | None:
    for token in tokens:
        if token.kind is TokenKind.STRING and len(token.value) - 2 > MAX_STRING_LITERAL_CHARS:
            return BoundViolation("literal_too_large", f"string of {len(token.value) - 2}")
    return None


# --- brackets: comprehensions, iterations, ranges, variable-length paths ---------------------
def _brackets(tokens: Sequence[Token]) -> BoundViolation | None:
    stack: list[_Frame] = []
    for index, token in enumerate(tokens):
        if token.kind is not TokenKind.PUNCT:
            continue
        if token.value in "([{":
            frame = _Frame(token.value, _kind_of(tokens, index), index)
            problem = _opening(tokens, index, frame, stack)
            if problem is not None:
                return problem
            stack.append(frame)
        elif token.value in ")]}":
            if not stack:
                return BoundViolation("unbalanced", token.value)
            frame = stack.pop()
            problem = _closing(tokens, frame, index)
            if problem is not None:
                return problem
    return BoundViolation("unbalanced", stack[-1].opener) if stack else None


def _kind_of(tokens: Sequence[Token], index: int) -> str:
    opener, before = tokens[index].value, tokens[index - 1] if index else None
    if opener == "[":
        return "relationship" if before is not None and _punct(before, "-") else "list"
    if opener == "(" and before is not None and before.kind is TokenKind.IDENT:
        if before.value in QUANTIFIERS and not _after_dot(tokens, index - 1):
            return "iteration"
        if before.value == "range" and not _after_dot(tokens, index - 1):
            return "range"
    if opener == "(" and before is not None and before.kind is TokenKind.QUOTED:
        if before.value.lower() in QUANTIFIERS:
            return "iteration"
        if before.value.lower() == "range":
            return "range"
    return "group"


def _opening(
    tokens: Sequence[Token], index: int, frame: _Frame, stack: Sequence[_Frame]
) -> BoundViolation | None:
    if frame.kind == "iteration" and any(f.kind == "iteration" for f in stack):
        return BoundViolation("nested_iteration", tokens[index - 1].value)
    if frame.opener == "{":
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if following is not None and (following.kind is TokenKind.NUMBER or _punct(following, ",")):
            return BoundViolation("quantified_path", "{")
    if frame.kind == "list" and _is_comprehension_head(tokens, index):
        return BoundViolation("list_comprehension", "")
    return None


def _is_comprehension_head(tokens: Sequence[Token], index: int) -> bool:
    """``[name IN`` starts a list comprehension."""
    if index + 2 >= len(tokens):
        return False
    name, keyword = tokens[index + 1], tokens[index + 2]
    return (
        name.kind in (TokenKind.IDENT, TokenKind.QUOTED)
        and keyword.kind is TokenKind.IDENT
        and keyword.value == "in"
    )


def _closing(tokens: Sequence[Token], frame: _Frame, end: int) -> BoundViolation | None:
    inside = _own_level(tokens, frame.start + 1, end)
    if frame.kind == "list":
        if any(_punct(t, "|") for t in inside):
            return BoundViolation("pattern_comprehension", "")
        items = sum(1 for t in inside if _punct(t, ",")) + 1 if inside else 0
        if items > MAX_LIST_LITERAL_ITEMS:
            return BoundViolation("literal_too_large", f"list of {items}")
    if frame.kind == "relationship":
        return _variable_length(inside)
    if frame.kind == "range":
        return _range_arguments(inside)
    return None


def _own_level(tokens: Sequence[Token], start: int, end: int) -> list[Token]:
    """Tokens between ``start`` and ``end`` that are not inside a nested bracket."""
    depth, found = 0, []
    for token in tokens[start:end]:
        if token.kind is TokenKind.PUNCT and token.value in "([{":
            if depth == 0:
                found.append(token)
            depth += 1
        elif token.kind is TokenKind.PUNCT and token.value in ")]}":
            depth -= 1
        elif depth == 0:
            found.append(token)
    return found


def _variable_length(inside: Sequence[Token]) -> BoundViolation | None:
    """``*``, ``*n``, ``*..n``, ``*m..n`` inside ``-[…]-``: an upper bound of at most
    :data:`MAX_VARIABLE_HOPS` must be written."""
    stars = [i for i, t in enumerate(inside) if _punct(t, "*")]
    if not stars:
        return None
    if len(stars) > 1:
        return BoundViolation("unbounded_path", "*")
    rest = list(inside[stars[0] + 1 :])
    lower = _take_decimal(rest)
    if len(rest) >= 2 and _punct(rest[0], ".") and _punct(rest[1], "."):
        del rest[:2]
        upper = _take_decimal(rest)
    else:
        upper = lower
    if upper is None or upper > MAX_VARIABLE_HOPS or (lower is not None and lower > upper):
        return BoundViolation("unbounded_path", f"at most {MAX_VARIABLE_HOPS} hops")
    return None


def _take_decimal(rest: list[Token]) -> int | None:
    if rest and rest[0].kind is TokenKind.NUMBER and _DECIMAL.fullmatch(rest[0].value):
        return int(rest.pop(0).value)
    return None


def _range_arguments(inside: Sequence[Token]) -> BoundViolation | None:
    """``range(a, b[, step])`` with integer literals and at most MAX_RANGE_ITEMS items."""
    values: list[int] = []
    sign, expect_value = 1, True
    for token in inside:
        if expect_value and _punct(token, "-") and sign == 1:
            sign = -1
        elif expect_value and token.kind is TokenKind.NUMBER and _DECIMAL.fullmatch(token.value):
            values.append(sign * int(token.value))
            sign, expect_value = 1, False
        elif not expect_value and _punct(token, ","):
            expect_value = True
        else:
            return BoundViolation("range_not_literal", "")
    if expect_value or len(values) not in (2, 3):
        return BoundViolation("range_not_literal", "")
    start, stop, step = values[0], values[1], values[2] if len(values) == 3 else 1
    if step == 0:
        return BoundViolation("range_not_literal", "step 0")
    items = max(0, (stop - start) // step + 1)
    if items > MAX_RANGE_ITEMS:
        return BoundViolation("range_too_large", str(items))
    return None


# --- operators ---------------------------------------------------------------------------------
def _plus_signs(tokens: Sequence[Token]) -> BoundViolation | None:
    """Every ``+`` adds a number literal: ``x + 1``, never ``s + s`` or ``-->+``."""
    for index, token in enumerate(tokens):
        if not _punct(token, "+"):
            continue
        number = tokens[index + 1] if index + 1 < len(tokens) else None
        after = tokens[index + 2] if index + 2 < len(tokens) else None
        if (
            number is None
            or number.kind is not TokenKind.NUMBER
            or (
                after is not None
                and after.kind is TokenKind.PUNCT
                and after.value in _BINDS_TIGHTER
            )
        ):
            return BoundViolation("operator_not_allowed", "+")
    return None


def _stars(tokens: Sequence[Token]) -> BoundViolation | None:
    """``*`` only as ``count(*)``, a projection star, a multiplication, or (checked with its
    relationship) a variable-length marker."""
    relationship_stars = _relationship_star_positions(tokens)
    for index, token in enumerate(tokens):
        if not _punct(token, "*") or index in relationship_stars:
            continue
        before = tokens[index - 1] if index else None
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        if before is None or after is None:
            if (
                before is not None
                and before.kind is TokenKind.IDENT
                and (before.value in _PROJECTION_STAR)
            ):
                continue
            return BoundViolation("operator_not_allowed", "*")
        if _punct(before, "(") and _punct(after, ")"):
            continue  # count(*)
        if before.kind is TokenKind.IDENT and before.value in _PROJECTION_STAR:
            continue  # RETURN * / WITH *
        if _punct(before, ")") and after.kind is TokenKind.NUMBER:
            continue  # (a + b) * 2
        if (before.kind in _OPERAND_KINDS or _punct(before, "]")) and (
            after.kind in _OPERAND_KINDS or _punct(after, "(")
        ):
            continue  # a * b
        return BoundViolation("operator_not_allowed", "*")
    return None


def _relationship_star_positions(tokens: Sequence[Token]) -> set[int]:
    positions: set[int] = set()
    stack: list[bool] = []  # per open bracket: is it a relationship bracket
    for index, token in enumerate(tokens):
        if token.kind is not TokenKind.PUNCT:
            continue
        if token.value in "([{":
            stack.append(token.value == "[" and index > 0 and _punct(tokens[index - 1], "-"))
        elif token.value in ")]}" and stack:
            stack.pop()
        elif token.value == "*" and stack and stack[-1]:
            positions.add(index)
    return positions


# --- rows and the full-text procedure ----------------------------------------------------------
def _row_counts(tokens: Sequence[Token]) -> BoundViolation | None:
    for index, token in enumerate(tokens):
        if token.kind is not TokenKind.IDENT or token.value not in _ROW_KEYWORDS:
            continue
        if _after_dot(tokens, index):
            continue  # a property key
        count = tokens[index + 1] if index + 1 < len(tokens) else None
        if (
            count is None
            or count.kind is not TokenKind.NUMBER
            or not _DECIMAL.fullmatch(count.value)
        ):
            return BoundViolation("limit_not_literal", token.value)
        if token.value != "limit" and int(count.value) > MAX_SKIP_ROWS:
            return BoundViolation("literal_too_large", f"{token.value} {count.value}")
    return None


def _fulltext_arguments(tokens: Sequence[Token]) -> BoundViolation | None:
    """``CALL db.index.fulltext.queryNodes('<index>', '<plain words>')`` and nothing else."""
    for index, token in enumerate(tokens):
        if token.kind is not TokenKind.IDENT or token.value != "call":
            continue
        name, end = _dotted(tokens, index + 1)
        if name != FULLTEXT_PROCEDURE:
            continue
        arguments = tokens[end : end + 5]
        shape = [t.kind if t.kind is not TokenKind.PUNCT else t.value for t in arguments]
        if shape != ["(", TokenKind.STRING, ",", TokenKind.STRING, ")"]:
            return BoundViolation("procedure_arguments", "literal index and query only")
        query = arguments[3].value[1:-1]
        if not _PLAIN_WORDS.fullmatch(query) or len(query) > MAX_STRING_LITERAL_CHARS:
            return BoundViolation("procedure_arguments", "plain words only")
    return None


def _dotted(tokens: Sequence[Token], start: int) -> tuple[str, int]:
    parts: list[str] = []
    index = start
    while index < len(tokens) and tokens[index].kind in (TokenKind.IDENT, TokenKind.QUOTED):
        parts.append(tokens[index].value)
        index += 1
        if index + 1 < len(tokens) and _punct(tokens[index], "."):
            index += 1
        else:
            break
    return ".".join(parts).lower(), index


def _binds_tighter(token: Token) -> bool:
    return token.kind is TokenKind.PUNCT and token.value in _BINDS_TIGHTER


# --- helpers -----------------------------------------------------------------------------------
def _after_dot(tokens: Sequence[Token], index: int) -> bool:
    return index > 0 and _punct(tokens[index - 1], ".")


def _punct(token: Token, value: str) -> bool:
    return token.kind is TokenKind.PUNCT and token.value == value
