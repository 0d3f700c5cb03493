"""Split a SourceDocument into structure-aware chunks whose spans index its text exactly.

Guarantees, for every document and every valid size triple:

- ``chunk.text == doc.text[chunk.start_char:chunk.end_char]``; each span starts and ends at a
  non-whitespace character;
- chunks are in document order, do not overlap, and their ordinals run 0..n-1;
- no chunk is longer than ``max_chars``, and every non-whitespace character is in a chunk.

How a document is cut, coarsest boundary first:

- Markdown (and HTML and DOCX, which their readers render Markdown-like): blocks are ATX
  headings, fenced code blocks (``` or ~~~; an unclosed fence runs to
  the end), tables (lines starting with ``|``) and paragraphs. A fence or table that fits in
  ``max_chars`` is never split; a larger one is split at line boundaries only. A heading
  starts a section, merged into the chunk before it only while that chunk is under
  ``min_chars`` and the result fits ``target_chars``; ``heading_path`` is the longest
  heading path enclosing the whole chunk.
- Code: top-level definitions (``def``/``class``/``func``/``fn``/``function``... at column 0,
  with their decorators and comments) start sections; then blank lines, then lines.
- Paged text (a PDF, ``page_starts`` set): each page starts a section, as a Markdown heading
  does, so a chunk spans pages only while the chunk before is under ``min_chars``; within a
  page, the text levels below.
- Text and records: circled-number paragraphs (① ②, Korean statutes), blank lines, sentences
  (``. ! ?`` before whitespace; ideographic full stop, fullwidth ! ?), lines.

Anything still longer than ``max_chars`` is hard-split at the last whitespace in the window,
or, without whitespace, at ``max_chars`` (stepping back over combining marks and joiners,
unless the whole window is one run of them).
Pieces are then packed greedily, in order, up to ``target_chars``; a piece smaller than
``min_chars`` may join its neighbour up to ``max_chars``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from graphctx.ingest.source import ChunkSpan, MediaType, SourceDocument

__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_MIN_CHARS", "DEFAULT_TARGET_CHARS", "chunk_document"]

DEFAULT_TARGET_CHARS: Final = 1200
DEFAULT_MAX_CHARS: Final = 2000
DEFAULT_MIN_CHARS: Final = 200

_Cutter = Callable[[str, int, int], list[int]]


def _cutter(pattern: str, flags: int = 0) -> _Cutter:
    """A boundary finder: a new piece starts at the end of every match strictly inside."""
    compiled = re.compile(pattern, flags)

    def cuts(text: str, start: int, end: int) -> list[int]:
        found = (match.end() for match in compiled.finditer(text, start, end))
        return [cut for cut in found if start < cut < end]

    return cuts


_CIRCLED_NUMBER = _cutter(r"^[ \t]*(?=[\u2460-\u2473\u3251-\u325f\u32b1-\u32bf])", re.MULTILINE)
_BLANK_LINE = _cutter(r"\n[ \t\r\f\v]*\n")
_SENTENCE = _cutter(r"[.!?][\"'\u201d\u2019\u00bb)\]]*(?=\s)|[\u3002\uff01\uff1f]")
_LINE = _cutter(r"\n")
_DEFINITION = re.compile(
    r"^(?:(?:export|default|pub(?:\([^)\n]*\))?|public|private|protected|static|async|abstract"
    r"|final|unsafe|extern)[ \t]+)*(?:def|class|func|fn|function|impl|struct|enum|trait"
    r"|interface)\b",
    re.MULTILINE,
)
_DEFINITION_PREAMBLE = re.compile(r"@|#|//|/\*|[ \t]\*")
_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_HEADING_OPEN = re.compile(r" {0,3}(#{1,6})(?:[ \t]|$)")
_EXTENDING_CATEGORIES: Final = frozenset({"Mn", "Mc", "Me", "Cf", "Sk"})
_TEXT_LEVELS: Final = (_CIRCLED_NUMBER, _BLANK_LINE, _SENTENCE, _LINE)
_PARAGRAPH_LEVELS: Final = (_CIRCLED_NUMBER, _SENTENCE, _LINE)
_CODE_LEVELS: Final = (_BLANK_LINE, _LINE)
_LINE_LEVELS: Final[tuple[_Cutter, ...]] = (_LINE,)
_ANY_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_MARKDOWN_LIKE: Final = frozenset({MediaType.MARKDOWN, MediaType.HTML, MediaType.DOCX})


@dataclass(frozen=True)
class _Span:
    """A block of the document (with how to cut it further) or a piece of one."""

    start: int
    end: int
    levels: Sequence[_Cutter] = ()
    heading_path: tuple[str, ...] = ()
    starts_section: bool = False


def chunk_document(
    doc: SourceDocument,
    *,
    target_chars: int = DEFAULT_TARGET_CHARS,
    max_chars: int = DEFAULT_MAX_CHARS,
    min_chars: int = DEFAULT_MIN_CHARS,
) -> list[ChunkSpan]:
    """Chunk ``doc`` (see the module docstring for the rules and guarantees).

    ``min_chars`` above ``target_chars`` is lowered to it, so a small target can be passed
    alone; other inconsistent sizes raise ``ValueError``.
    """
    if not 1 <= target_chars <= max_chars or min_chars < 0:
        raise ValueError("chunk sizes need 1 <= target_chars <= max_chars and min_chars >= 0")
    min_chars = min(min_chars, target_chars)
    text = doc.text
    pieces = [piece for block in _blocks(doc) for piece in _split_block(text, block, max_chars)]
    packed = _pack(pieces, target_chars, max_chars, min_chars)
    return [
        ChunkSpan(i, p.start, p.end, text[p.start : p.end], p.heading_path)
        for i, p in enumerate(packed)
    ]


def _blocks(doc: SourceDocument) -> list[_Span]:
    if doc.page_starts:
        size = len(doc.text)
        bounds = sorted({0, size, *(min(max(start, 0), size) for start in doc.page_starts)})
        return [_Span(a, b, _TEXT_LEVELS, starts_section=True) for a, b in pairwise(bounds)]
    if doc.media_type in _MARKDOWN_LIKE:
        return _markdown_blocks(doc.text)
    if doc.media_type is MediaType.CODE:
        return _code_blocks(doc.text)
    return [_Span(0, len(doc.text), _TEXT_LEVELS)]


def _split_block(text: str, block: _Span, max_chars: int) -> list[_Span]:
    spans = _split(text, block.start, block.end, block.levels, max_chars)
    return [
        _Span(start, end, (), block.heading_path, block.starts_section and index == 0)
        for index, (start, end) in enumerate(spans)
    ]


def _split(
    text: str, start: int, end: int, levels: Sequence[_Cutter], max_chars: int
) -> list[tuple[int, int]]:
    """Trimmed spans covering every non-whitespace character of text[start:end]."""
    start, end = _trim(text, start, end)
    if end - start <= max_chars:
        return [(start, end)] if start < end else []
    for depth, level in enumerate(levels):
        cuts = level(text, start, end)
        if cuts:
            bounds = [start, *cuts, end]
            rest = levels[depth + 1 :]
            return [
                span for a, b in pairwise(bounds) for span in _split(text, a, b, rest, max_chars)
            ]
    return _hard_split(text, start, end, max_chars)


def _hard_split(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    while end - start > max_chars:
        cut = next((i for i in range(start + max_chars, start, -1) if text[i].isspace()), None)
        if cut is None:
            cut = _grapheme_safe_cut(text, start, start + max_chars)
        spans.append(_trim(text, start, cut))
        start, end = _trim(text, cut, end)
    spans.append((start, end))
    return spans


def _grapheme_safe_cut(text: str, start: int, cut: int) -> int:
    """Move ``cut`` back so it does not separate a base character from its marks or joiner.

    A window with no boundary at all (a run of combining marks longer than ``max_chars``) is
    cut at the window's end: stepping back to one character per piece would make the split
    quadratic (50,000 marks took 26 s) for no better result.
    """
    safe = cut
    while safe - 1 > start and (_extends_grapheme(text[safe]) or text[safe - 1] == "\u200d"):
        safe -= 1
    return cut if safe - 1 <= start else safe


def _extends_grapheme(char: str) -> bool:
    """Marks, format characters (ZWJ), modifiers, and Hangul medial or final jamo."""
    return unicodedata.category(char) in _EXTENDING_CATEGORIES or "\u1160" <= char <= "\u11ff"


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _pack(pieces: list[_Span], target: int, max_chars: int, min_chars: int) -> list[_Span]:
    packed: list[_Span] = []
    for piece in pieces:
        current = packed[-1] if packed else None
        if current is not None and _joins(current, piece, target, max_chars, min_chars):
            path = _common_prefix(current.heading_path, piece.heading_path)
            packed[-1] = _Span(current.start, piece.end, (), path, current.starts_section)
        else:
            packed.append(piece)
    return packed


def _joins(current: _Span, piece: _Span, target: int, max_chars: int, min_chars: int) -> bool:
    size = piece.end - current.start
    current_small = current.end - current.start < min_chars
    if piece.starts_section:
        return current_small and size <= target
    small = current_small or piece.end - piece.start < min_chars
    return size <= target or (small and size <= max_chars)


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    same = [x == y for x, y in zip(a, b, strict=False)]
    return a[: same.index(False) if False in same else len(same)]


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end including the newline, content without the line ending) per line."""
    found = _ANY_LINE.finditer(text)
    return [(line.start(), line.end(), line.group().rstrip("\r\n")) for line in found]


def _markdown_blocks(text: str) -> list[_Span]:
    lines = _lines(text)
    blocks: list[_Span] = []
    stack: list[tuple[int, str]] = []  # (level, title) of the enclosing headings
    index = 0
    while index < len(lines):
        start, _, content = lines[index]
        heading = _heading(content)
        if heading:
            stack = [*(entry for entry in stack if entry[0] < heading[0]), heading]
            stop, levels = index + 1, _LINE_LEVELS
        elif content.strip():
            stop, levels = _markdown_block_end(lines, index)
        else:
            index += 1
            continue
        path = tuple(title for _, title in stack)
        blocks.append(_Span(start, lines[stop - 1][1], levels, path, bool(heading)))
        index = stop
    return blocks


def _markdown_block_end(
    lines: list[tuple[int, int, str]], index: int
) -> tuple[int, tuple[_Cutter, ...]]:
    """The line index after the block starting at ``index``, and how to split the block."""
    content = lines[index][2]
    marker = _fence_marker(content)
    if marker:
        closing = re.compile(rf"[ \t]*{re.escape(marker[0])}{{{len(marker)},}}[ \t]*")
        after = (i for i in range(index + 1, len(lines)) if closing.fullmatch(lines[i][2]))
        return next(after, len(lines) - 1) + 1, _LINE_LEVELS
    is_table = content.lstrip().startswith("|")
    stop = index + 1
    while stop < len(lines) and _continues(lines[stop][2], is_table):
        stop += 1
    return stop, _LINE_LEVELS if is_table else _PARAGRAPH_LEVELS


def _continues(content: str, is_table: bool) -> bool:
    """Does this line continue a table (or a paragraph) block?"""
    if is_table:
        return content.lstrip().startswith("|")
    if not content.strip() or content.lstrip().startswith("|"):
        return False
    return not (_fence_marker(content) or _heading(content))


def _heading(content: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line; parsed by hand, a regex here backtracks badly."""
    opening = _HEADING_OPEN.match(content)
    if not opening:
        return None
    title = content[opening.end() :].strip(" \t")
    without_closing = title.rstrip("#")
    if not without_closing or without_closing[-1] in " \t":
        title = without_closing.rstrip(" \t")
    return len(opening.group(1)), title


def _fence_marker(content: str) -> str | None:
    """The opening run of a fence line (a backtick fence's info string has no backtick)."""
    fence = _FENCE_OPEN.match(content)
    if not fence or (fence.group(1)[0] == "`" and "`" in fence.group(2)):
        return None
    return fence.group(1)


def _code_blocks(text: str) -> list[_Span]:
    starts = {_with_preamble(text, match.start()) for match in _DEFINITION.finditer(text)}
    bounds = sorted(starts | {0, len(text)})
    return [
        _Span(start, end, _CODE_LEVELS, starts_section=start in starts)
        for start, end in pairwise(bounds)
        if start < end
    ]


def _with_preamble(text: str, start: int) -> int:
    """Move a definition's start back over the decorator and comment lines right above it."""
    while start > 0:
        previous = text.rfind("\n", 0, start - 1) + 1
        if not _DEFINITION_PREAMBLE.match(text, previous, start):
            break
        start = previous
    return start
