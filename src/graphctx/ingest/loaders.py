"""Load a file or a folder into SourceDocuments: one LoadResult per document or per failure.

A folder is walked in sorted name order. Hidden entries (``.name``) and sidecar files are
passed over silently (a sidecar is read with its file). Every other file the walk does not
load, an unsupported extension, a symlinked folder (not followed) or something that is not a
regular file, comes back as a *skipped* result with the reason, so the ingest report lists it.
A file named explicitly with an unsupported extension is reported as ``unsupported_type``.
One bad file (or one bad JSONL line) is reported with its reason and everything else proceeds.

Text is strict UTF-8; a leading BOM is dropped, nothing else changes (CRLF stays): chunk spans
index ``SourceDocument.text`` as the store keeps it. Only Markdown has front matter.

PDF, DOCX and HTML files go through their format reader (:mod:`graphctx.ingest.formats`); the
text it extracts *is* ``SourceDocument.text``, so spans index it exactly as for any other
file. Their title (PDF info, DOCX properties, ``<title>``) is the default title; a sidecar
still wins. A PDF's page start offsets travel as ``SourceDocument.page_starts``. A format
whose extra is not installed fails each of its files with ``format_extra_missing``, naming
the ``pip install`` to run.

Sidecar metadata: ``<file>.meta.yaml``, ``<file>.meta.yml`` or ``<file>.meta.json`` next to a
file. The sidecar is the operator's override, so every field it sets **wins** over front
matter and record fields (``extra`` is merged key by key). For ``.json``/``.jsonl`` files the
sidecar applies to every record and must not set ``document_id``.

Records: a ``.json`` object, each object of a ``.json`` array (origin ``path#<index>``) or each
non-empty ``.jsonl`` line (origin ``path#L<line>``). The text is the first present of
``text``/``content``/``body`` (or ``text_field``), the id the first of ``id``/``document_id``
(or ``id_field``); the remaining fields are metadata as in front matter.

Error codes: ``file_not_found``, ``unreadable_file``, ``unsupported_type``, ``file_too_large``,
``binary_file``, ``invalid_utf8``, ``empty_document``, ``front_matter_invalid``,
``sidecar_invalid``, ``json_invalid``, ``record_invalid``; from the format readers
``format_extra_missing``, ``pdf_encrypted``, ``pdf_invalid``, ``pdf_no_text``,
``docx_invalid``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.formats import READERS
from graphctx.ingest.frontmatter import (
    merge_metadata,
    metadata_from_mapping,
    parse_yaml_mapping,
    split_front_matter,
)
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument

__all__ = ["DEFAULT_MAX_FILE_BYTES", "SIDECAR_SUFFIXES", "LoadResult", "load_path"]

DEFAULT_MAX_FILE_BYTES: Final = 10 * 1024 * 1024
SIDECAR_MAX_BYTES: Final = 1024 * 1024
BINARY_SNIFF_BYTES: Final = 8 * 1024
SIDECAR_SUFFIXES: Final = (".meta.yaml", ".meta.yml", ".meta.json")
DEFAULT_TEXT_FIELDS: Final = ("text", "content", "body")
DEFAULT_ID_FIELDS: Final = ("id", "document_id")
_BOM: Final = "\ufeff"
_RECORD_SUFFIXES: Final = frozenset({".json", ".jsonl"})
_FILE_TYPES: Final[Mapping[str, tuple[MediaType, str | None]]] = {
    ".md": (MediaType.MARKDOWN, None),
    ".markdown": (MediaType.MARKDOWN, None),
    ".txt": (MediaType.TEXT, None),
    ".rst": (MediaType.TEXT, None),
    ".py": (MediaType.CODE, "python"),
    ".js": (MediaType.CODE, "javascript"),
    ".ts": (MediaType.CODE, "typescript"),
    ".go": (MediaType.CODE, "go"),
    ".rs": (MediaType.CODE, "rust"),
    ".java": (MediaType.CODE, "java"),
    ".c": (MediaType.CODE, "c"),
    ".h": (MediaType.CODE, "c"),
    ".cpp": (MediaType.CODE, "cpp"),
    ".sql": (MediaType.CODE, "sql"),
    ".sh": (MediaType.CODE, "shell"),
    ".yaml": (MediaType.CODE, "yaml"),
    ".yml": (MediaType.CODE, "yaml"),
    ".toml": (MediaType.CODE, "toml"),
}


@dataclass(frozen=True)
class LoadResult:
    """Exactly one of ``document``, ``error`` and ``skipped`` is set; ``skipped`` says why a
    folder walk passed over a file (it is not an error: the rest of the folder loads)."""

    origin: str
    document: SourceDocument | None = None
    error: InvalidDocumentError | None = None
    skipped: str | None = None

    def __post_init__(self) -> None:
        if sum(value is not None for value in (self.document, self.error, self.skipped)) != 1:
            raise ValueError("a LoadResult holds exactly one of document, error and skipped")


@dataclass(frozen=True)
class _Options:
    max_bytes: int
    text_fields: tuple[str, ...]
    id_fields: tuple[str, ...]


def load_path(
    path: Path,
    *,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    text_field: str | None = None,
    id_field: str | None = None,
) -> Iterator[LoadResult]:
    """Yield one result per document (or failure) under ``path``, in a deterministic order."""
    options = _Options(
        max_bytes=max_bytes,
        text_fields=(text_field,) if text_field else DEFAULT_TEXT_FIELDS,
        id_fields=(id_field,) if id_field else DEFAULT_ID_FIELDS,
    )
    if path.is_dir():
        yield from _load_folder(path, options)
    elif not path.exists():
        yield _failure(str(path), "file_not_found", "no such file or folder")
    elif not _is_supported(path):
        yield _failure(str(path), "unsupported_type", _unsupported(path))
    else:
        yield from _load_file(path, options)


def _load_folder(folder: Path, options: _Options) -> Iterator[LoadResult]:
    try:
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name)
    except OSError as exc:
        yield _failure(str(folder), "unreadable_file", f"cannot list folder: {exc.strerror}")
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name.endswith(SIDECAR_SUFFIXES):
            continue
        if entry.is_dir():
            if entry.is_symlink():
                yield LoadResult(str(entry), skipped="a symbolic link to a folder (not followed)")
            else:
                yield from _load_folder(entry, options)
        elif not entry.is_file():
            yield LoadResult(str(entry), skipped="not a regular file")
        elif _is_supported(entry):
            yield from _load_file(entry, options)
        else:
            yield LoadResult(str(entry), skipped=_unsupported(entry))


def _is_supported(path: Path) -> bool:
    suffix = path.suffix.lower()
    return suffix in _FILE_TYPES or suffix in _RECORD_SUFFIXES or suffix in READERS


def _unsupported(path: Path) -> str:
    kind = f"file type {path.suffix!r}" if path.suffix else "file without an extension"
    return f"unsupported {kind}"


def _load_file(path: Path, options: _Options) -> Iterator[LoadResult]:
    origin = str(path)
    is_records = path.suffix.lower() in _RECORD_SUFFIXES
    try:
        if path.suffix.lower() in READERS:
            yield LoadResult(origin, document=_format_document(path, options.max_bytes))
            return
        text = _read_text(path, options.max_bytes)
        sidecar = _read_sidecar(path, is_records)
        if is_records:
            yield from _load_records(path, text, sidecar, options)
            return
        document = _file_document(path, text, sidecar)
    except InvalidDocumentError as exc:
        yield LoadResult(origin, error=exc)
        return
    yield LoadResult(origin, document=document)


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    origin = str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            message = f"{size} bytes is over the limit of {max_bytes} bytes"
            raise _error(origin, "file_too_large", message)
        with path.open("rb") as stream:
            data = stream.read(max_bytes + 1)  # the file may have grown since stat
    except OSError as exc:
        raise _error(origin, "unreadable_file", f"cannot read: {exc.strerror}") from exc
    if len(data) > max_bytes:
        raise _error(origin, "file_too_large", f"over the limit of {max_bytes} bytes")
    return data


def _read_text(path: Path, max_bytes: int) -> str:
    origin = str(path)
    data = _read_bytes(path, max_bytes)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise _error(origin, "binary_file", "binary content (NUL bytes) in the first 8 KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"invalid UTF-8 at byte offset {exc.start}: {exc.reason}"
        raise _error(origin, "invalid_utf8", message) from exc
    return text.removeprefix(_BOM)


def _read_sidecar(path: Path, is_records: bool) -> DocumentMetadata | None:
    found = [
        candidate
        for candidate in (path.with_name(path.name + suffix) for suffix in SIDECAR_SUFFIXES)
        if candidate.is_file()
    ]
    if not found:
        return None
    if len(found) > 1:
        names = ", ".join(candidate.name for candidate in found)
        raise _error(str(path), "sidecar_invalid", f"more than one sidecar: {names}")
    sidecar = str(found[0])
    try:
        text = _read_text(found[0], SIDECAR_MAX_BYTES)
    except InvalidDocumentError as exc:
        raise _error(sidecar, "sidecar_invalid", exc.message) from exc
    if sidecar.endswith(".json"):
        mapping = _parse_json(text, sidecar, "", code="sidecar_invalid")
    else:
        mapping = parse_yaml_mapping(text, sidecar, code="sidecar_invalid")
    if not isinstance(mapping, Mapping):
        raise _error(sidecar, "sidecar_invalid", "a sidecar must be a mapping (a JSON object)")
    metadata = metadata_from_mapping(mapping, sidecar, code="sidecar_invalid")
    if is_records and metadata.document_id is not None:
        message = "a sidecar of a record file must not set document_id (it applies to every record)"
        raise _error(sidecar, "sidecar_invalid", message)
    return metadata


def _file_document(path: Path, text: str, sidecar: DocumentMetadata | None) -> SourceDocument:
    origin = str(path)
    media_type, language = _FILE_TYPES[path.suffix.lower()]
    metadata = DocumentMetadata()
    if media_type is MediaType.MARKDOWN:
        metadata, text = split_front_matter(text, origin=origin)
    _require_content(text, origin)
    if sidecar is not None:
        metadata = merge_metadata(metadata, sidecar)
    return SourceDocument(origin, media_type, text, metadata, language_hint=language)


def _format_document(path: Path, max_bytes: int) -> SourceDocument:
    """A PDF, DOCX or HTML file through its format reader; the sidecar wins over its title."""
    origin = str(path)
    data = _read_bytes(path, max_bytes)
    sidecar = _read_sidecar(path, is_records=False)
    extracted = READERS[path.suffix.lower()](data, origin)
    metadata = DocumentMetadata(title=extracted.title)
    if sidecar is not None:
        metadata = merge_metadata(metadata, sidecar)
    return SourceDocument(
        origin, extracted.media_type, extracted.text, metadata, page_starts=extracted.page_starts
    )


def _load_records(
    path: Path, text: str, sidecar: DocumentMetadata | None, options: _Options
) -> Iterator[LoadResult]:
    _require_content(text, str(path))
    if path.suffix.lower() == ".jsonl":
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                yield _record_result(f"{path}#L{number}", line, sidecar, options, line=number)
        return
    data = _parse_json(text, str(path), "")
    if not isinstance(data, list):
        yield _record_result(str(path), data, sidecar, options)
        return
    if not data:
        raise _error(str(path), "empty_document", "the JSON array holds no records")
    for index, item in enumerate(data):
        yield _record_result(f"{path}#{index}", item, sidecar, options)


def _parse_json(text: str, origin: str, where: str, code: str = "json_invalid") -> object:
    """Decode JSON; every failure is typed, not only syntax errors.

    ``json.loads`` raises a plain ``ValueError`` for an integer longer than Python converts
    (4,300 digits) and ``RecursionError`` for arrays nested a few thousand deep.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _error(origin, code, f"{where}invalid JSON: {exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise _error(origin, code, f"{where}invalid JSON: {type(exc).__name__}: {exc}") from exc


def _record_result(
    origin: str,
    value: object,
    sidecar: DocumentMetadata | None,
    options: _Options,
    line: int | None = None,
) -> LoadResult:
    """``value`` is a parsed JSON value, or the text of JSONL line number ``line``."""
    try:
        if line is not None:
            value = _parse_json(str(value), origin, f"line {line}: ")
        document = _record_document(origin, value, sidecar, options)
    except InvalidDocumentError as exc:
        return LoadResult(origin, error=exc)
    return LoadResult(origin, document=document)


def _record_document(
    origin: str, value: object, sidecar: DocumentMetadata | None, options: _Options
) -> SourceDocument:
    if not isinstance(value, dict):
        kind = type(value).__name__
        raise _error(origin, "record_invalid", f"a record must be a JSON object, got {kind}")
    text_key = _first_present(value, options.text_fields)
    if text_key is None:
        wanted = "/".join(options.text_fields)
        raise _error(origin, "record_invalid", f"the record has no text field ({wanted})")
    text = value[text_key]
    if not isinstance(text, str):
        raise _error(origin, "record_invalid", f"field {text_key!r} must be a string")
    _require_content(text, origin)
    fields = {key: item for key, item in value.items() if key != text_key}
    id_key = _first_present(fields, options.id_fields)
    if id_key is not None:
        fields["document_id"] = fields.pop(id_key)
    metadata = metadata_from_mapping(fields, origin, code="record_invalid")
    if sidecar is not None:
        metadata = merge_metadata(metadata, sidecar)
    return SourceDocument(
        origin, MediaType.RECORD, text, metadata, locator=origin.rpartition("#")[2]
    )


def _first_present(mapping: Mapping[str, object], keys: tuple[str, ...]) -> str | None:
    return next((key for key in keys if mapping.get(key) is not None), None)


def _require_content(text: str, origin: str) -> None:
    if not text.strip():
        raise _error(origin, "empty_document", "the document holds only whitespace")


def _error(origin: str, code: str, message: str) -> InvalidDocumentError:
    return InvalidDocumentError(message, path=origin, code=code)


def _failure(origin: str, code: str, message: str) -> LoadResult:
    return LoadResult(origin, error=_error(origin, code, message))
