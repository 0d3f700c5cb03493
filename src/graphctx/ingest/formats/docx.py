"""DOCX: the body's paragraphs and tables in order, headings as Markdown headings
(extra ``docx``: python-docx).

``Title`` and ``Heading 1``..``Heading 6`` paragraphs become ``#``..``######`` lines, so the
Markdown chunker splits sections on them; list paragraphs become ``- `` items; a table becomes
``| cell | cell |`` rows (a merged cell once). Body lines that would read as Markdown structure
are escaped (:func:`~graphctx.ingest.formats.common.markdown_safe`). Page headers and footers,
comments, footnotes and text boxes are not read.

A file that is not a zip archive (a password-protected DOCX is an encrypted OLE file) or that
python-docx cannot open is ``docx_invalid``; so is an archive whose members declare more than
:data:`MAX_UNCOMPRESSED_BYTES` (a zip bomb): python-docx reads every part into memory, and a
zip member never inflates beyond its declared size.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.formats.common import (
    Extracted,
    check_extracted_size,
    format_error,
    import_extra,
    markdown_safe,
)
from graphctx.ingest.source import MediaType

if TYPE_CHECKING:
    from docx.document import Document
    from docx.table import Table
    from docx.text.paragraph import Paragraph

__all__ = ["MAX_UNCOMPRESSED_BYTES", "read_docx"]

MAX_UNCOMPRESSED_BYTES: Final = 200 * 1024 * 1024
_HEADING_STYLE = re.compile(r"Heading ([1-9])")


def read_docx(data: bytes, origin: str) -> Extracted:
    docx = import_extra("docx", "docx", ".docx", origin)
    _check_archive(data, origin)
    try:
        document: Document = docx.Document(io.BytesIO(data))
        blocks = list(_blocks(document))
        title = document.core_properties.title
    except InvalidDocumentError:
        raise
    except Exception as exc:
        # python-docx reads hostile input; any failure inside it means this file.
        message = f"not a readable DOCX: {type(exc).__name__}: {exc}"
        raise format_error(origin, "docx_invalid", message) from exc
    text = "\n\n".join(blocks)
    check_extracted_size(len(text), origin)
    if not text.strip():
        raise format_error(origin, "empty_document", "the DOCX body holds no text")
    return Extracted(text + "\n", MediaType.DOCX, title=title.strip() or None)


def _check_archive(data: bytes, origin: str) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            declared = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        message = "not a DOCX file: not a zip archive (a password-protected DOCX is encrypted)"
        raise format_error(origin, "docx_invalid", message) from exc
    if declared > MAX_UNCOMPRESSED_BYTES:
        message = f"the archive unpacks to {declared} bytes, over {MAX_UNCOMPRESSED_BYTES}"
        raise format_error(origin, "docx_invalid", message)


def _blocks(document: Document) -> Iterator[str]:
    from docx.table import Table

    for block in document.iter_inner_content():
        rendered = _table(block) if isinstance(block, Table) else _paragraph(block)
        if rendered:
            yield rendered


def _paragraph(paragraph: Paragraph) -> str:
    lines = [markdown_safe(line) for line in paragraph.text.split("\n")]
    text = "\n".join(line for line in (raw.rstrip() for raw in lines) if line)
    if not text:
        return ""
    style = paragraph.style.name if paragraph.style is not None else ""
    heading = _HEADING_STYLE.fullmatch(style or "")
    if style == "Title" or heading:
        level = min(int(heading.group(1)), 6) if heading else 1
        return "#" * level + " " + " ".join(text.split())
    if (style or "").startswith("List"):
        return "- " + text
    return text


def _table(table: Table) -> str:
    rows = []
    for row in table.rows:
        cells = []
        previous = None
        for cell in row.cells:
            if previous is not None and cell._tc is previous:  # a merged cell repeats
                continue
            previous = cell._tc
            cells.append(" ".join(cell.text.split()).replace("|", "\\|"))
        if any(cells):
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
