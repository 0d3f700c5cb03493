"""What every format reader shares: its result, its errors and Markdown-safe lines.

A reader turns a file's bytes into :class:`Extracted` text. That text is what the store keeps
as the document's text and what every chunk span indexes; nothing is derived from the file
after this point. A reader whose library is an optional extra imports it through
:func:`import_extra`, so a missing extra is a typed, per-file error naming the extra, not a
traceback and not a silently skipped file.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Final

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.source import MediaType

__all__ = [
    "FORMAT_EXTRA_MISSING",
    "MAX_EXTRACTED_CHARS",
    "Extracted",
    "check_extracted_size",
    "format_error",
    "import_extra",
    "markdown_safe",
]

FORMAT_EXTRA_MISSING: Final = "format_extra_missing"
# Compressed formats can expand far beyond the file-size limit; no real document needs more.
MAX_EXTRACTED_CHARS: Final = 20_000_000
# Lines the Markdown chunker would read as structure: an ATX heading, a fence, a table row.
_MARKDOWN_STRUCTURE = re.compile(r"#{1,6}(?:[ \t]|$)|`{3}|~{3}|\|")


@dataclass(frozen=True)
class Extracted:
    """A document's text as read from its format, plus what the format said about it.

    ``page_starts[i]`` is the offset in ``text`` where page ``i + 1`` begins (PDF only);
    ``title`` is the format's own title (PDF info, DOCX core properties, HTML ``<title>``).
    """

    text: str
    media_type: MediaType
    title: str | None = None
    page_starts: tuple[int, ...] = ()


def format_error(origin: str, code: str, message: str) -> InvalidDocumentError:
    return InvalidDocumentError(message, path=origin, code=code)


def import_extra(module: str, extra: str, suffix: str, origin: str) -> ModuleType:
    """Import an optional dependency, or raise the per-file error that names its extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        message = (
            f"reading {suffix} files needs the {extra!r} extra ({module} is not installed):"
            f" pip install 'graphctx[{extra}]'"
        )
        raise format_error(origin, FORMAT_EXTRA_MISSING, message) from exc


def check_extracted_size(size: int, origin: str) -> None:
    if size > MAX_EXTRACTED_CHARS:
        message = f"the extracted text is over the limit of {MAX_EXTRACTED_CHARS} characters"
        raise format_error(origin, "file_too_large", message)


def markdown_safe(line: str) -> str:
    """One line of body text that the Markdown chunker reads as text, never as structure.

    Leading whitespace is dropped; a line that would open a heading, a fence or a table gets
    a backslash in front, as Markdown escapes it."""
    line = line.lstrip()
    return "\\" + line if _MARKDOWN_STRUCTURE.match(line) else line
