"""HTML: the main text, Markdown-like, with headings kept as headings (standard library only).

What is kept: the text of ``<main>`` (or ``role="main"``) when the page has one, else of the
whole body; headings ``<h1>``..``<h6>`` as ``#`` lines, so the Markdown chunker splits
sections on them; list items as ``- `` lines; table rows as ``| cell | cell |``; ``<pre>`` as
a fenced block with its whitespace. Inline whitespace is collapsed, character references are
decoded, other body lines that would read as Markdown structure are escaped.

What is dropped: ``script``, ``style``, ``noscript``, ``template``, ``svg``, ``iframe``,
forms and their controls, ``nav``, ``aside``, and ``header``/``footer`` outside an
``article`` or ``main`` (site chrome; an article's own header stays), plus every element
marked ``hidden`` or ``aria-hidden="true"``. ``<title>`` becomes the document title.

Bytes are decoded as UTF-8 (a BOM is dropped), else with the ``<meta charset>`` the page
declares in its first 1,024 bytes; otherwise the file is ``invalid_utf8``. A page with no
text left is ``empty_document``.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Final

from graphctx.ingest.formats.common import (
    Extracted,
    check_extracted_size,
    format_error,
    markdown_safe,
)
from graphctx.ingest.source import MediaType

__all__ = ["read_html"]

CHARSET_SNIFF_BYTES: Final = 1024
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_DROPPED: Final = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "iframe", "object",
        "canvas", "form", "button", "select", "textarea", "nav", "aside", "head",
    }
)  # fmt: skip
_CHROME: Final = frozenset({"header", "footer"})
_CONTENT_ROOTS: Final = frozenset({"article", "main"})
_VOID: Final = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr",
    }
)  # fmt: skip
_BLOCKS: Final = frozenset(
    {
        "address", "article", "blockquote", "body", "dd", "details", "dialog", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
        "h6", "hgroup", "hr", "html", "li", "main", "ol", "p", "section", "summary",
        "table", "ul", "br", "caption",
    }
)  # fmt: skip
_HEADINGS: Final = {f"h{level}": level for level in range(1, 7)}


def read_html(data: bytes, origin: str) -> Extracted:
    markup = _decode(data, origin)
    parser = _MainText()
    parser.feed(markup)
    parser.close()
    blocks = parser.result()
    text = "\n\n".join(blocks)
    check_extracted_size(len(text), origin)
    if not text.strip():
        message = "the page holds no text outside scripts, styles and navigation"
        raise format_error(origin, "empty_document", message)
    return Extracted(text + "\n", MediaType.HTML, title=parser.title())


def _decode(data: bytes, origin: str) -> str:
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as utf8_error:
        declared = _CHARSET.search(data[:CHARSET_SNIFF_BYTES])
        if declared is not None:
            name = declared.group(1).decode("ascii")
            try:
                return data.decode(name)
            except (LookupError, UnicodeDecodeError):
                pass
        message = f"invalid UTF-8 at byte offset {utf8_error.start} and no usable <meta charset>"
        raise format_error(origin, "invalid_utf8", message) from utf8_error


@dataclass
class _Block:
    in_main: bool
    text: str


@dataclass
class _State:
    blocks: list[_Block] = field(default_factory=list)
    inline: list[str] = field(default_factory=list)
    heading: int = 0
    item_depth: int = 0
    pre_depth: int = 0
    table_rows: list[str] = field(default_factory=list)
    row: list[str] | None = None
    saw_main: bool = False
    title: list[str] = field(default_factory=list)


class _MainText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._state = _State()
        self._open: list[str] = []  # open non-void elements, innermost last
        self._dropped_at: int | None = None  # depth of the outermost dropped element
        self._main_at: int | None = None
        self._content_roots = 0
        self._in_title = False

    # --- results -------------------------------------------------------------------------
    def result(self) -> list[str]:
        self._flush()
        self._flush_table()
        blocks = self._state.blocks
        if self._state.saw_main:
            blocks = [block for block in blocks if block.in_main]
        return [block.text for block in blocks]

    def title(self) -> str | None:
        return " ".join("".join(self._state.title).split()) or None

    # --- parser callbacks ----------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self._state.title and self._title_counts():
            self._in_title = True
        if tag in _VOID:
            if tag in ("br", "hr") and self._dropped_at is None:
                self._flush()
            return
        self._open.append(tag)
        depth = len(self._open)
        if self._dropped_at is None and self._drops(tag, dict(attrs)):
            self._dropped_at = depth
            return
        if self._dropped_at is not None:
            return
        if tag == "main" or dict(attrs).get("role") == "main":
            self._state.saw_main = True
            self._main_at = self._main_at or depth
        if tag in _CONTENT_ROOTS:
            self._content_roots += 1
        self._block_start(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag not in self._open:
            return  # a stray end tag
        while self._open:
            closed = self._open.pop()
            self._close(closed, len(self._open) + 1)
            if closed == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._state.title.append(data)
            return
        if self._dropped_at is None:
            self._state.inline.append(data)

    # --- structure -----------------------------------------------------------------------
    def _title_counts(self) -> bool:
        """The page's ``<title>``, not an SVG's: outside dropped elements or in ``<head>``."""
        return self._dropped_at is None or self._open[self._dropped_at - 1] == "head"

    def _drops(self, tag: str, attrs: dict[str, str | None]) -> bool:
        if "hidden" in attrs or (attrs.get("aria-hidden") or "").lower() == "true":
            return True
        return tag in _DROPPED or (tag in _CHROME and not self._content_roots)

    def _close(self, tag: str, depth: int) -> None:
        if self._dropped_at is not None:
            if depth == self._dropped_at:
                self._dropped_at = None
            return
        self._block_end(tag)
        if tag in _CONTENT_ROOTS:
            self._content_roots -= 1
        if depth == self._main_at:
            self._main_at = None

    def _block_start(self, tag: str) -> None:
        state = self._state
        if tag in ("td", "th") and state.row is not None and "".join(state.inline).strip():
            self._end_cell(always=True)  # the previous cell's end tag was left out
        if tag in _BLOCKS or tag == "pre" or tag == "tr":
            self._flush()
        if tag in _HEADINGS:
            state.heading = _HEADINGS[tag]
        elif tag == "li":
            state.item_depth += 1
        elif tag == "pre":
            state.pre_depth += 1
        elif tag == "tr":
            state.row = []

    def _block_end(self, tag: str) -> None:
        state = self._state
        if tag in ("td", "th"):
            self._end_cell(always=True)
            return
        if tag == "tr":
            self._end_cell(always=False)
            if state.row is not None and any(state.row):
                state.table_rows.append("| " + " | ".join(state.row) + " |")
            state.row = None
            return
        if tag == "pre":
            self._emit_pre()
            state.pre_depth -= 1
            return
        if tag in _BLOCKS:
            self._flush()
        if tag in _HEADINGS:
            state.heading = 0
        elif tag == "li":
            state.item_depth -= 1
        if tag == "table":
            self._flush_table()

    def _end_cell(self, *, always: bool) -> None:
        """End the open cell; text straight inside a row (no cell) counts only if any."""
        state = self._state
        text = " ".join("".join(state.inline).split()).replace("|", "\\|")
        state.inline.clear()
        if state.row is not None and (always or text):
            state.row.append(text)

    def _emit_pre(self) -> None:
        state = self._state
        body = "".join(state.inline).strip("\n")
        state.inline.clear()
        if not body.strip():
            return
        longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
        fence = "`" * max(3, longest + 1)
        self._add(f"{fence}\n{body}\n{fence}")

    def _flush(self) -> None:
        state = self._state
        if state.pre_depth:
            return  # a <pre> keeps its content together until it closes
        if state.row is not None:
            return  # a cell's text is the cell's, until the cell ends
        text = " ".join("".join(state.inline).split())
        state.inline.clear()
        if not text:
            return
        self._flush_table()
        if state.heading:
            self._add("#" * state.heading + " " + text)
        elif state.item_depth:
            self._add("- " + markdown_safe(text))
        else:
            self._add(markdown_safe(text))

    def _flush_table(self) -> None:
        state = self._state
        if state.table_rows:
            rows, state.table_rows = state.table_rows, []
            self._add("\n".join(rows))

    def _add(self, text: str) -> None:
        self._state.blocks.append(_Block(self._main_at is not None, text))
