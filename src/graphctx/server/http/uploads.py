"""Turning ingest bodies into SourceDocuments with the same code paths as file ingest.

JSON documents go through :func:`metadata_from_mapping` (and front matter for markdown).
Uploaded files are written under a private temporary folder, keeping their relative names so
sidecars (``<file>.meta.yaml``) sit next to their file, and loaded with :func:`load_path`:
the same type detection, UTF-8 and binary checks, front matter, records and sidecars as
``graphctx ingest``. Reported origins are the uploaded names, never server paths.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from starlette.datastructures import FormData, UploadFile

from graphctx.contract.request import NAME_PATTERN
from graphctx.errors import InvalidDocumentError, InvalidRequestError
from graphctx.ingest.frontmatter import merge_metadata, metadata_from_mapping, split_front_matter
from graphctx.ingest.loaders import SIDECAR_SUFFIXES, load_path
from graphctx.ingest.source import MediaType, SourceDocument
from graphctx.server.models import DocumentError, DocumentIn, IngestRequest
from graphctx.server.service import with_document_defaults

__all__ = ["Batch", "batch_from_form", "batch_from_json"]

FORM_FIELDS: Final = frozenset({"files", "scopes", "source_version"})
MAX_NAME_CHARS: Final = 512
COPY_CHUNK_BYTES: Final = 64 * 1024
_SCOPE = re.compile(NAME_PATTERN)
_BAD_SEGMENT = re.compile(r"[\x00-\x1f\x7f\\:]")


@dataclass(frozen=True)
class Batch:
    sources: list[SourceDocument]
    rejected: list[DocumentError]
    scopes: list[str]


def batch_from_json(body: IngestRequest) -> Batch:
    sources: list[SourceDocument] = []
    rejected: list[DocumentError] = []
    for index, document in enumerate(body.documents):
        origin = f"documents[{index}]"
        try:
            sources.append(_json_source(origin, document))
        except InvalidDocumentError as exc:
            rejected.append(DocumentError(origin=origin, code=exc.code, message=exc.message))
    return Batch(sources, rejected, list(body.scopes))


def _json_source(origin: str, document: DocumentIn) -> SourceDocument:
    fields = document.model_dump(exclude={"text", "media_type", "metadata"}, exclude_none=True)
    explicit = metadata_from_mapping({**document.metadata, **fields}, origin)
    text = document.text
    metadata = explicit
    if document.media_type == "markdown":
        front, text = split_front_matter(text, origin=origin)
        metadata = merge_metadata(front, explicit)
    if not text.strip():
        raise InvalidDocumentError(
            "the document holds only whitespace", path=origin, code="empty_document"
        )
    source = SourceDocument(origin, MediaType(document.media_type), text, metadata)
    return with_document_defaults(
        source, document.document_id, document.source_uri or document.document_id
    )


async def batch_from_form(form: FormData, max_file_bytes: int) -> Batch:
    unknown = sorted(set(form.keys()) - FORM_FIELDS)
    if unknown:
        raise InvalidRequestError(
            f"unknown form field {unknown[0]!r}: send each file in a field named 'files' "
            "(the other fields are 'scopes' and 'source_version')",
            field=unknown[0],
        )
    scopes = _form_scopes(form)
    version = form.get("source_version")
    if version is not None and (not isinstance(version, str) or not version.strip()):
        raise InvalidRequestError(
            "source_version must be a non-empty string", field="source_version"
        )
    uploads = form.getlist("files")
    if not uploads or not all(isinstance(u, UploadFile) for u in uploads):
        raise InvalidRequestError(
            "upload one or more files, each in a field named 'files'", field="files"
        )
    with tempfile.TemporaryDirectory(prefix="graphctx-upload-") as tmp:
        root = Path(tmp)
        names, rejected = await _save_uploads(
            root, [u for u in uploads if isinstance(u, UploadFile)]
        )
        sources, errors = await asyncio.to_thread(_load_saved, root, names, max_file_bytes)
    if isinstance(version, str):
        sources = [_with_version(source, version.strip()) for source in sources]
    return Batch(sources, rejected + errors, scopes)


def _form_scopes(form: FormData) -> list[str]:
    scopes: list[str] = []
    for value in form.getlist("scopes"):
        if not isinstance(value, str):
            raise InvalidRequestError("scopes must be text fields", field="scopes")
        scopes.extend(s.strip() for s in value.split(",") if s.strip())
    for scope in scopes:
        if not _SCOPE.fullmatch(scope):
            raise InvalidRequestError(f"scope {scope!r} must match {NAME_PATTERN}", field="scopes")
    return sorted(set(scopes))


async def _save_uploads(
    root: Path, uploads: list[UploadFile]
) -> tuple[list[str], list[DocumentError]]:
    names: list[str] = []
    rejected: list[DocumentError] = []
    for index, upload in enumerate(uploads):
        name = safe_relative_name(upload.filename)
        if name is None or name in names:
            code = "invalid_filename" if name is None else "duplicate_filename"
            rejected.append(
                DocumentError(
                    origin=f"files[{index}]",
                    code=code,
                    message="file names must be unique relative paths without '..' or hidden parts",
                )
            )
            continue
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            while chunk := await upload.read(COPY_CHUNK_BYTES):
                out.write(chunk)
        names.append(name)
    return names, rejected


def _load_saved(
    root: Path, names: list[str], max_file_bytes: int
) -> tuple[list[SourceDocument], list[DocumentError]]:
    saved = set(names)
    sources: list[SourceDocument] = []
    errors: list[DocumentError] = []
    prefix = str(root) + "/"
    for name in names:
        if name.endswith(SIDECAR_SUFFIXES):
            if not any(name == other + suffix for other in saved for suffix in SIDECAR_SUFFIXES):
                errors.append(
                    DocumentError(
                        origin=name,
                        code="sidecar_without_file",
                        message="a sidecar was uploaded without its file",
                    )
                )
            continue
        for result in load_path(root / name, max_bytes=max_file_bytes):
            origin = result.origin.removeprefix(prefix)
            if result.error is not None:
                message = result.error.message.replace(prefix, "").replace(str(root), "")
                errors.append(DocumentError(origin=origin, code=result.error.code, message=message))
            elif result.document is not None:
                source = replace(result.document, origin=origin)
                sources.append(with_document_defaults(source, origin, origin))
    return sources, errors


def _with_version(source: SourceDocument, version: str) -> SourceDocument:
    if source.metadata.source_version is not None:
        return source
    return replace(source, metadata=replace(source.metadata, source_version=version))


def safe_relative_name(filename: str | None) -> str | None:
    """A relative POSIX path of plain segments, or ``None`` for anything that could escape."""
    if not filename or len(filename) > MAX_NAME_CHARS:
        return None
    segments = filename.split("/")
    if any(
        segment in ("", ".", "..") or segment.startswith(".") or _BAD_SEGMENT.search(segment)
        for segment in segments
    ):
        return None
    return filename
