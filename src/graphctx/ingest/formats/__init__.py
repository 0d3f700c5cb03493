"""Format readers for files that are not plain text, by file suffix.

| suffix | reader | extra | media type |
|---|---|---|---|
| ``.pdf`` | :func:`~graphctx.ingest.formats.pdf.read_pdf` | ``pdf`` (pypdf) | ``pdf`` |
| ``.docx`` | :func:`~graphctx.ingest.formats.docx.read_docx` | ``docx`` (python-docx) | ``docx`` |
| ``.html``, ``.htm`` | :func:`~graphctx.ingest.formats.html.read_html` | none | ``html`` |

``pip install 'graphctx[documents]'`` installs both extras. Each reader imports its library
only when a file of its format is read, so a missing extra fails that file alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from graphctx.ingest.formats.common import FORMAT_EXTRA_MISSING, Extracted
from graphctx.ingest.formats.docx import read_docx
from graphctx.ingest.formats.html import read_html
from graphctx.ingest.formats.pdf import read_pdf

__all__ = ["FORMAT_EXTRA_MISSING", "READERS", "Extracted", "Reader"]

Reader = Callable[[bytes, str], Extracted]  # (the file's bytes, its origin) -> its text

READERS: Final[Mapping[str, Reader]] = {
    ".pdf": read_pdf,
    ".docx": read_docx,
    ".html": read_html,
    ".htm": read_html,
}
