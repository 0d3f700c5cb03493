"""Sentence- and element-safe truncation that keeps an exact prefix of the original text.

A cut point is an offset ``k`` such that ``text[:k]`` ends cleanly:

- after a sentence end in prose: ``. ! ? 。 …`` and their full-width forms (plus closing quotes
  and brackets) followed
  by whitespace or the end of the line; not after a list number (``1.``), a single letter
  (``J.``) or a common abbreviation (``e.g.``, ``Dr.``);
- at the end of a line that ends a Korean sentence without punctuation (``...다`` / ``...요``);
- at the end of an element: a line followed by a blank line or by the start of another block
  element (heading, list item, quote, table row, code fence), and after every table row;
- after the closing line of a fenced code block.

Never inside a fenced code block (an unclosed fence runs to the end of the text) and never
inside a Markdown table row. Trailing whitespace is left out of the prefix.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from typing import Final

from graphctx.context.text_memo import text_memo

__all__ = ["cuts_start_at", "fit_prefix", "safe_cut_points"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_ROW = re.compile(r"^\s*\||\|\s*$")
_BLOCK_START = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|\||`{3,}|~{3,})")
_CLOSERS = "\"'\u201d\u2019\u300d\u300f)\\]"
_MARKS = ".!?\u3002\uff01\uff1f\u2026"  # what a sentence end starts with
_SENTENCE_END = re.compile(f"[{_MARKS}]+[{_CLOSERS}]*(?=\\s|$)")
_MARK = re.compile(f"[{_MARKS}]")
_KOREAN_LINE_END = re.compile(f"[\ub2e4\uc694][{_CLOSERS}]*$")
_LIST_NUMBER = re.compile(r"^\s*\d{1,3}\.$")
_WORD_CHARS: Final = frozenset(string.ascii_letters + ".")
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "prof", "no", "art", "sec", "fig"}
)


def _is_abbreviation(line: str, dot: int) -> bool:
    """Whether the '.' at ``line[dot]`` ends an abbreviation, an initial or a list number."""
    if _LIST_NUMBER.match(line, 0, dot + 1):
        return True
    # The word before the dot: the leftmost letter from which only letters and dots run up to
    # it, as re.search(r"[A-Za-z][A-Za-z.]*$", line[:dot]) finds it, but walking back from the
    # dot instead of trying every start in the line.
    start = dot
    while start > 0 and line[start - 1] in _WORD_CHARS:
        start -= 1
    token = line[start:dot].lstrip(".")
    if not token:
        return False
    return len(token) == 1 or token.lower() in _ABBREVIATIONS


def _sentence_cuts(line: str, offset: int) -> list[int]:
    cuts: list[int] = []
    for match in _SENTENCE_END.finditer(line):
        single_dot = match.group()[0] == "." and match.end() - match.start() == 1
        if single_dot and _is_abbreviation(line, match.start()):
            continue
        cuts.append(offset + match.end())
    return cuts


def _closes_fence(fence: str, line: str) -> bool:
    match = _FENCE.match(line)
    return (
        match is not None
        and match.group(1)[0] == fence[0]
        and len(match.group(1)) >= len(fence)
        and not line[match.end() :].strip()
    )


def safe_cut_points(text: str) -> list[int]:
    """Ascending offsets ``0 < k < len(text)`` at which ``text[:k]`` is a safe prefix."""
    return list(_cut_points(text))


def cuts_start_at(text: str) -> int:
    """An offset below every safe cut point of ``text``, or at the first; found without
    computing them.

    Every cut is in a line with content (blank lines give none): the end of such a line
    without its trailing whitespace, or the end of a sentence in it, after the mark its
    match starts with. The first line with content ends no later than any later one, and no
    mark comes before the first. So no cut is below the smaller of the two.
    """
    content = len(text) - len(text.lstrip())  # the first line with content holds this
    line_end = text.find("\n", content)
    first_line_end = len(text[: len(text) if line_end < 0 else line_end].rstrip())
    mark = _MARK.search(text)
    return first_line_end if mark is None else min(first_line_end, mark.start() + 1)


# The packer cuts the same chunks request after request (a tenth of a served request's time
# went here, graphctx bench http); the points depend on the text alone.
CUT_POINTS_CACHE: Final = 2_048  # texts


@text_memo(maxsize=CUT_POINTS_CACHE)
def _cut_points(text: str) -> tuple[int, ...]:
    cuts: list[int] = []
    lines = text.split("\n")
    offset = 0
    fence: str | None = None
    for index, line in enumerate(lines):
        line_end = offset + len(line.rstrip())
        next_line = lines[index + 1] if index + 1 < len(lines) else None
        fence_match = _FENCE.match(line)
        if fence is not None:
            if _closes_fence(fence, line):
                fence = None
                cuts.append(line_end)
        elif fence_match:
            fence = fence_match.group(1)
        elif _TABLE_ROW.match(line):
            cuts.append(line_end)
        elif line.strip():
            cuts.extend(_sentence_cuts(line.rstrip(), offset))
            ends_element = next_line is not None and (
                not next_line.strip() or _BLOCK_START.match(next_line) is not None
            )
            if ends_element or _KOREAN_LINE_END.search(line.rstrip()):
                cuts.append(line_end)
        offset += len(line) + 1
    return tuple(sorted({k for k in cuts if 0 < k < len(text.rstrip())}))


def fit_prefix(text: str, fits: Callable[[str], bool], cuts: Sequence[int] | None = None) -> int:
    """The longest safe cut ``k`` with ``fits(text[:k])``; 0 when none fits.

    Binary search assumes the cost grows with the prefix (true for BPE counts of prefixes in
    practice); whatever it returns was checked with ``fits``.
    """
    points = list(safe_cut_points(text) if cuts is None else cuts)
    low, high = 0, len(points) - 1
    best = -1
    while low <= high:
        middle = (low + high) // 2
        if fits(text[: points[middle]]):
            best = middle
            low = middle + 1
        else:
            high = middle - 1
    return points[best] if best >= 0 else 0
