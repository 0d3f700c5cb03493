"""The items offline concepts are formed from, with the structure each one sits in.

An *item* is the unit a concept groups (seed 001's article): one document, or, for a
Markdown document with headings, each of its sections (consecutive chunks under the same
heading path). Every item
knows its *parent*: the structure that encloses it, outermost first:

- a document declaring structure metadata (:data:`STRUCTURE_FIELDS`, e.g. a statute
  article's ``chapter`` / ``section`` / ``subsection``, 장 / 절 / 관) sits in that path;
- a section of a Markdown document (a ``.md`` file) sits in its document and its enclosing headings
  (``## A`` > ``### B``: a chunk under B has the parent (document, A) and the title B);
- anything else has no parent: its structure is unknown, so no structural concept holds it.

Items keep the document order of the batch, which is the order structural runs follow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from graphctx.ingest.extract.port import ExtractionInput

__all__ = ["STRUCTURE_FIELDS", "ConceptItem", "heading_paths", "items_of"]

# Metadata fields that name the enclosing structure, outermost first (편 / 장 / 절 / 관).
STRUCTURE_FIELDS: Final = ("part", "chapter", "section", "subsection")
_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")
MARKDOWN_SUFFIXES: Final = (".md", ".markdown", ".mdx")
_AMENDMENT_NOTE: Final = re.compile(r"\s*<[^<>\n]{0,60}\d{4}\.\s?\d{1,2}\.\s?\d{1,2}[^<>\n]{0,60}>")


@dataclass(frozen=True)
class ConceptItem:
    """One unit a concept can hold; ``key`` is unique in the batch."""

    key: str
    document_id: str
    node_id: str  # the document node the item's document is written as
    label: str  # how a concept's description names it ("제23조 해고 등의 제한")
    title: str
    text: str
    chunk_ids: tuple[str, ...]
    parent: tuple[str, ...]  # enclosing structure, outermost first; () = unknown
    collection: str = ""  # the law (``law`` metadata) a statute article belongs to


def _clean(label: str) -> str:
    """A heading without its amendment note ("제1장 총칙 <개정 2009.12.31>" -> "제1장 총칙")."""
    return " ".join(_AMENDMENT_NOTE.sub("", label).split())


def heading_paths(chunks: Sequence[str]) -> list[tuple[str, ...]]:
    """The heading path each chunk starts under (headings inside fenced code are ignored)."""
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    paths = []
    for text in chunks:
        start: tuple[str, ...] | None = None
        for line in text.splitlines():
            opened = _FENCE.match(line)
            if opened and fence is None:
                fence = opened.group(1)[0]
                continue
            if opened and opened.group(1)[0] == fence:
                fence = None
                continue
            heading = None if fence else _HEADING.match(line)
            if heading is not None:
                level = len(heading.group(1))
                stack = [(lvl, title) for lvl, title in stack if lvl < level]
                stack.append((level, _clean(heading.group(2))))
            elif line.strip() and start is None:
                start = tuple(title for _, title in stack)
        paths.append(start if start is not None else tuple(title for _, title in stack))
    return paths


def _document_label(doc: ExtractionInput) -> str:
    number = doc.metadata.get("article_no")
    if number and doc.title:
        return f"{number} {doc.title}"
    return number or doc.title or doc.document_id


def items_of(documents: Sequence[ExtractionInput], node_ids: dict[str, str]) -> list[ConceptItem]:
    """The batch's items in document order (``node_ids``: document id -> document node)."""
    items: list[ConceptItem] = []
    for doc in documents:
        if not doc.chunks:
            continue
        texts = [text for _, text in doc.chunks]
        markdown = (doc.relative_path or "").lower().endswith(MARKDOWN_SUFFIXES)
        paths = heading_paths(texts) if markdown else [() for _ in texts]
        node_id = node_ids[doc.document_id]
        collection = doc.metadata.get("law", "")
        if any(paths):
            sections: list[tuple[tuple[str, ...], list[tuple[str, str]]]] = []
            for chunk, path in zip(doc.chunks, paths, strict=True):
                if sections and sections[-1][0] == path:  # a long section in several chunks
                    sections[-1][1].append(chunk)
                else:
                    sections.append((path, [chunk]))
            for path, chunks in sections:
                title = path[-1] if path else (doc.title or doc.document_id)
                parent = (doc.title or doc.document_id, *path[:-1])
                label = f"{doc.title} > {title}" if doc.title and path else title
                items.append(
                    ConceptItem(chunks[0][0], doc.document_id, node_id, label, title,
                                "\n".join(t for _, t in chunks), tuple(c for c, _ in chunks),
                                parent, collection)
                )  # fmt: skip
            continue
        parent = tuple(
            _clean(value) for name in STRUCTURE_FIELDS if (value := doc.metadata.get(name))
        )
        items.append(
            ConceptItem(
                doc.document_id,
                doc.document_id,
                node_id,
                _document_label(doc),
                doc.title or "",
                "\n".join(texts),
                tuple(cid for cid, _ in doc.chunks),
                tuple(p for p in parent if p),
                collection,
            )
        )
    return items
