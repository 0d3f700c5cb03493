"""The document text around an evidence item, rebuilt only from chunks the request may see.

:func:`surrounding_text` lists the item's document with ``store.document_chunks`` (an
unscoped write-path read) and passes those chunks through the output gate's re-check
(:func:`graphctx.retrieve.gate.recheck_visible`: a re-read with the effective scopes inside
the store query, then the gate's rule). :func:`build_surrounding` applies the same rule
(:func:`graphctx.retrieve.gate.is_visible`) to whatever it is given. Chunks of another
document version than the item's are ignored (the item's span indexes its own version's
text), and so is anything that does not reproduce the item's content exactly at its span:
context is then omitted, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from graphctx.contract import EvidenceItem
from graphctx.retrieve.gate import is_visible, recheck_visible
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import ChunkView

__all__ = [
    "CONTEXT_CHARS",
    "ItemContext",
    "Surrounding",
    "build_surrounding",
    "surrounding_text",
    "visible_chunks",
]

CONTEXT_CHARS: Final = 600  # document characters shown on each side of the span


@dataclass(frozen=True)
class Surrounding:
    """``before + highlighted + after`` is a contiguous slice of the document text."""

    before: str
    highlighted: str
    after: str
    # More *visible* text exists beyond the window; an invisible chunk never sets these, so
    # not even the existence of hidden text shows.
    truncated_before: bool
    truncated_after: bool


@dataclass(frozen=True)
class ItemContext:
    """What a reader sees around one item: its chunk's title and the surrounding text."""

    title: str | None
    surrounding: Surrounding | None


@dataclass(frozen=True)
class _Segment:
    start: int
    text: str

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def visible_chunks(
    chunks: Iterable[ChunkView], item: EvidenceItem, scopes: frozenset[str]
) -> list[ChunkView]:
    """The item's document-version chunks whose scopes intersect ``scopes`` (the gate's rule)."""
    return [
        c
        for c in chunks
        if c.document_id == item.document_id
        and c.document_version == item.document_version
        and c.source_uri == item.source_uri
        and is_visible(c, scopes)
        and len(c.text) == c.end_char - c.start_char
    ]


def build_surrounding(
    item: EvidenceItem,
    chunks: Iterable[ChunkView],
    scopes: frozenset[str],
    context_chars: int = CONTEXT_CHARS,
) -> Surrounding | None:
    """The item's span inside up to ``context_chars`` of visible text on each side, or None."""
    segments = _merge(visible_chunks(chunks, item, scopes))
    start, end = item.span.start_char, item.span.end_char
    home = next((s for s in segments if s.start <= start and end <= s.end), None)
    if home is None:
        return None
    highlighted = home.text[start - home.start : end - home.start]
    if highlighted != item.content:
        return None
    first = max(home.start, start - context_chars)
    last = min(home.end, end + context_chars)
    return Surrounding(
        before=home.text[first - home.start : start - home.start],
        highlighted=highlighted,
        after=home.text[end - home.start : last - home.start],
        truncated_before=first > home.start or home is not segments[0],
        truncated_after=last < home.end or home is not segments[-1],
    )


async def surrounding_text(
    store: GraphStore,
    namespace: str,
    items: Sequence[EvidenceItem],
    scopes: frozenset[str],
    deadline_at: float,
) -> list[ItemContext]:
    """Title and surrounding text of each item, from chunks the gate confirms for ``scopes``.

    A document whose re-check runs out of time contributes nothing (context is omitted)."""
    visible_of: dict[str, list[ChunkView]] = {}
    contexts: list[ItemContext] = []
    for item in items:
        if item.document_id not in visible_of:
            listed = await store.document_chunks(namespace, item.document_id)
            try:
                visible_of[item.document_id] = await recheck_visible(
                    store, namespace, listed, scopes, deadline_at
                )
            except StageTimeout:
                visible_of[item.document_id] = []
        visible = visible_of[item.document_id]
        title = next((c.title for c in visible if c.chunk_id == item.chunk_id), None)
        contexts.append(ItemContext(title, build_surrounding(item, visible, scopes)))
    return contexts


def _merge(chunks: list[ChunkView]) -> list[_Segment]:
    """Contiguous runs of document text; overlapping chunks agree, so the first one wins."""
    segments: list[_Segment] = []
    for chunk in sorted(chunks, key=lambda c: (c.start_char, c.end_char)):
        last = segments[-1] if segments else None
        if last is not None and chunk.start_char <= last.end:
            if chunk.end_char > last.end:
                extra = chunk.text[last.end - chunk.start_char :]
                segments[-1] = _Segment(last.start, last.text + extra)
        else:
            segments.append(_Segment(chunk.start_char, chunk.text))
    return segments
