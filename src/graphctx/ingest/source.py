"""What loaders produce and chunkers consume: a source document with its metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


class MediaType(StrEnum):
    MARKDOWN = "markdown"
    TEXT = "text"
    CODE = "code"
    RECORD = "record"  # one JSON object (from .json or one line of .jsonl)
    # Extracted by a format reader (graphctx.ingest.formats); HTML and DOCX text is rendered
    # Markdown-like (``#`` headings) and chunked as Markdown, PDF text as plain text.
    PDF = "pdf"
    DOCX = "docx"
    HTML = "html"


@dataclass(frozen=True)
class DocumentMetadata:
    """Per-document metadata from front matter, a sidecar file, a record or CLI flags.

    Every field is optional here; the ingest pipeline fills defaults (document_id from the
    path, source_uri from the path, scopes from flags) and rejects a document without scopes.
    """

    document_id: str | None = None
    source_uri: str | None = None
    scopes: tuple[str, ...] = ()
    source_version: str | None = None
    title: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceDocument:
    """A loaded document. ``text`` is the exact text that chunk spans index."""

    origin: str  # the path (and record index) it was loaded from, for reports
    media_type: MediaType
    text: str
    metadata: DocumentMetadata
    language_hint: str | None = None  # e.g. "python" for code
    locator: str | None = None  # a record's place in its file ("L3", "0"); origin ends "#<locator>"
    # Where each page starts in ``text`` (a PDF's page i + 1 at page_starts[i]); () if unpaged.
    page_starts: tuple[int, ...] = ()


@dataclass(frozen=True)
class ChunkSpan:
    """A chunk of a SourceDocument: ``text == document.text[start_char:end_char]``."""

    ordinal: int
    start_char: int
    end_char: int
    text: str
    heading_path: tuple[str, ...] = ()
