"""A fail-closed Cypher tokenizer for the Text2Cypher guard.

It does not parse Cypher; it only cuts a statement into the tokens the guard reasons about,
so that comments, string contents, backtick quoting, letter case and spacing cannot hide a
keyword or a procedure name. Anything it does not understand is an error, never a guess:

- comments (``//`` to the end of the line, ``/* ... */``) are dropped; unterminated ones fail;
- string literals become one ``STRING`` token (their content is never inspected as code);
- backtick-quoted names become one ``QUOTED`` token whose value is the unquoted name;
- outside strings and backticks only printable ASCII, space, tab, CR and LF are accepted, so
  Unicode whitespace, homoglyphs, zero-width characters and ``\\uXXXX`` escapes (a backslash
  is rejected there) cannot make the server read something the guard did not see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["LexError", "Token", "TokenKind", "strip_comments", "tokenize"]


class TokenKind(StrEnum):
    IDENT = "ident"  # unquoted name or keyword; ``value`` is lower-cased
    QUOTED = "quoted"  # `backtick quoted` name; ``value`` is the name as written
    STRING = "string"
    NUMBER = "number"
    PARAM = "param"  # $name; ``value`` is the lower-cased name
    PUNCT = "punct"


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    value: str
    start: int
    end: int


class LexError(ValueError):
    """The statement contains something the guard will not reason about."""


_WHITESPACE = frozenset(" \t\r\n")
_PUNCT = frozenset("()[]{},.:;=<>+-*/%^|!?&")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(
    r"0[xX][0-9A-Fa-f_]+|0[oO][0-7_]+|[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?"
)
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")


def _quoted_end(text: str, start: int, quote: str) -> int:
    """Index just past the closing quote of a string or backtick name opened at ``start``."""
    i = start + 1
    while i < len(text):
        char = text[i]
        if quote != "`" and char == "\\":
            i += 2
            continue
        if char == quote:
            if quote == "`" and text.startswith("``", i):
                i += 2
                continue
            return i + 1
        i += 1
    raise LexError("unterminated quote")


def _comment_end(text: str, start: int) -> int:
    if text.startswith("//", start):
        newline = min(
            (p for p in (text.find("\n", start), text.find("\r", start)) if p >= 0),
            default=len(text),
        )
        return newline
    close = text.find("*/", start + 2)
    if close < 0:
        raise LexError("unterminated comment")
    return close + 2


def tokenize(text: str) -> list[Token]:
    """All significant tokens of ``text``; raises :class:`LexError` on anything unexpected."""
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in _WHITESPACE:
            i += 1
        elif text.startswith(("//", "/*"), i):
            i = _comment_end(text, i)
        elif char in "'\"":
            end = _quoted_end(text, i, char)
            tokens.append(Token(TokenKind.STRING, text[i:end], i, end))
            i = end
        elif char == "`":
            end = _quoted_end(text, i, "`")
            name = text[i + 1 : end - 1].replace("``", "`")
            tokens.append(Token(TokenKind.QUOTED, name, i, end))
            i = end
        elif char == "$":
            tokens.append(_param(text, i))
            i = tokens[-1].end
        elif (match := _IDENT.match(text, i)) is not None:
            tokens.append(Token(TokenKind.IDENT, match.group().lower(), i, match.end()))
            i = match.end()
        elif (match := _NUMBER.match(text, i)) is not None:
            tokens.append(Token(TokenKind.NUMBER, match.group(), i, match.end()))
            i = match.end()
        elif char in _PUNCT:
            tokens.append(Token(TokenKind.PUNCT, char, i, i + 1))
            i += 1
        else:
            raise LexError(f"unexpected character U+{ord(char):04X} outside a string")
    return tokens


def _param(text: str, start: int) -> Token:
    if text.startswith("`", start + 1):
        end = _quoted_end(text, start + 1, "`")
        return Token(TokenKind.PARAM, text[start + 2 : end - 1].lower(), start, end)
    match = _PARAM_NAME.match(text, start + 1)
    if match is None:
        raise LexError("a parameter without a name")
    return Token(TokenKind.PARAM, match.group().lower(), start, match.end())


def strip_comments(text: str, tokens: list[Token]) -> str:
    """``text`` rebuilt from its tokens: comments become one space, nothing else changes.

    The server then runs exactly the characters the guard analysed.
    """
    parts: list[str] = []
    previous = 0
    for token in tokens:
        gap = text[previous : token.start]
        if gap:
            parts.append("\n" if ("\n" in gap or "\r" in gap) else " ")
        parts.append(text[token.start : token.end])
        previous = token.end
    return "".join(parts).strip()
