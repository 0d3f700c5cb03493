"""Fuzz targets that run inside the bounded worker: module-level, picklable in and out.

Each returns plain data (spans, summaries) so the test process checks the properties; an
exception travels back as :class:`bounded.Raised`.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from graphctx.ingest.chunking import chunk_document
from graphctx.ingest.frontmatter import split_front_matter
from graphctx.ingest.loaders import SIDECAR_SUFFIXES, load_path
from graphctx.ingest.source import ChunkSpan, DocumentMetadata, MediaType, SourceDocument

__all__ = [
    "LoadSummary",
    "backtrack",
    "chunk_text",
    "load_files",
    "split_markdown",
    "warm_up",
]


@dataclass(frozen=True)
class LoadSummary:
    """One LoadResult: a document's text and metadata, or the error's class and code."""

    origin: str
    text: str | None = None
    metadata: DocumentMetadata | None = None
    error_type: str | None = None
    error_code: str | None = None


def warm_up() -> None:
    """Import everything once, so the first timed call measures the target only."""


def backtrack(length: int) -> bool:
    """A catastrophic regular expression: it holds the interpreter, so only a process
    boundary can stop it (the self-test of the hang detection uses it)."""
    return re.match(r"(a+)+$", "a" * length + "b") is not None


def chunk_text(
    text: str, media_type: MediaType, target: int, max_chars: int, min_chars: int
) -> list[ChunkSpan]:
    document = SourceDocument("fuzz", media_type, text, DocumentMetadata())
    return chunk_document(document, target_chars=target, max_chars=max_chars, min_chars=min_chars)


def load_files(files: dict[str, bytes]) -> list[LoadSummary]:
    """Write ``files`` into a fresh folder, load the folder, then each (non-sidecar) file by
    name: a folder walk and an explicit path take different branches."""
    summaries: list[LoadSummary] = []
    with tempfile.TemporaryDirectory(prefix="graphctx-fuzz-") as folder:
        root = Path(folder)
        for name, data in files.items():
            (root / name).write_bytes(data)
        named = (root / name for name in sorted(files) if not name.endswith(SIDECAR_SUFFIXES))
        targets = [root, *named]
        for target in targets:
            for result in load_path(target):
                origin = result.origin.removeprefix(folder)
                if result.document is not None:
                    summaries.append(
                        LoadSummary(origin, result.document.text, result.document.metadata)
                    )
                else:
                    error = result.error
                    kind = type(error)
                    summaries.append(
                        LoadSummary(
                            origin,
                            error_type=f"{kind.__module__}.{kind.__qualname__}",
                            error_code=getattr(error, "code", None),
                        )
                    )
    return summaries


def split_markdown(raw: str) -> tuple[DocumentMetadata, str]:
    return split_front_matter(raw, origin="fuzz.md")
