"""PDF: the text layer, page by page, with each page's start offset (extra ``pdf``: pypdf).

Pages are joined by a blank line, so the chunker prefers page boundaries; each page's text is
stripped and NUL characters are dropped. ``page_starts`` lets a chunk's span be mapped back to
the page (or page range) it came from. A PDF encrypted with an empty user password (common for
"no copying" restrictions) is opened; one that needs a password is ``pdf_encrypted``. A file
pypdf cannot parse is ``pdf_invalid``; a PDF whose pages hold no text (a scan) is
``pdf_no_text``: OCR it first.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Final

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.formats.common import (
    Extracted,
    check_extracted_size,
    format_error,
    import_extra,
)
from graphctx.ingest.source import MediaType

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["PAGE_SEPARATOR", "read_pdf"]

PAGE_SEPARATOR: Final = "\n\n"


def read_pdf(data: bytes, origin: str) -> Extracted:
    pypdf = import_extra("pypdf", "pdf", ".pdf", origin)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise format_error(origin, "pdf_encrypted", "the PDF needs a password to be read")
        pages = _page_texts(reader, origin)
        title = _title(reader)
    except pypdf.errors.FileNotDecryptedError as exc:
        raise format_error(origin, "pdf_encrypted", "the PDF needs a password") from exc
    except pypdf.errors.DependencyError as exc:
        message = f"the PDF is encrypted in a way this installation cannot read: {exc}"
        raise format_error(origin, "pdf_encrypted", message) from exc
    except InvalidDocumentError:
        raise
    except Exception as exc:
        # pypdf reads hostile input; any failure inside it means this file, not graphctx.
        message = f"not a readable PDF: {type(exc).__name__}: {exc}"
        raise format_error(origin, "pdf_invalid", message) from exc
    text, starts = _join(pages)
    if not text.strip():
        message = "the PDF has no text layer (a scanned document?): OCR it first"
        raise format_error(origin, "pdf_no_text", message)
    return Extracted(text, MediaType.PDF, title=title, page_starts=starts)


def _page_texts(reader: PdfReader, origin: str) -> list[str]:
    texts: list[str] = []
    size = 0
    for page in reader.pages:
        text = (page.extract_text() or "").replace("\x00", "").strip()
        size += len(text) + len(PAGE_SEPARATOR)
        check_extracted_size(size, origin)
        texts.append(text)
    return texts


def _title(reader: PdfReader) -> str | None:
    info = reader.metadata
    title = None if info is None else info.title
    return title.strip() or None if isinstance(title, str) else None


def _join(pages: list[str]) -> tuple[str, tuple[int, ...]]:
    starts: list[int] = []
    offset = 0
    for index, page in enumerate(pages):
        if index:
            offset += len(PAGE_SEPARATOR)
        starts.append(offset)
        offset += len(page)
    return PAGE_SEPARATOR.join(pages), tuple(starts)
