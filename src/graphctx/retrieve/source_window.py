"""More of a cited document around one chunk, rebuilt only from chunks the caller may see.

:func:`read_source_window` reads the cited chunk with the effective scopes inside the store
query (``fetch_chunks``) and the gate's rule (:func:`graphctx.retrieve.gate.is_visible`); a
chunk that is missing and a chunk that is not visible both answer ``None``, so the caller
cannot tell them apart. The text around it comes from the document's chunks as listed for the
explorer's surrounding text (:mod:`graphctx.retrieve.surrounding`): every one of them passes the
output gate's re-check (:func:`graphctx.retrieve.gate.recheck_visible`) and must belong to the
cited chunk's document version before a character of it is used. :func:`window_around` then
widens the cited span over contiguous visible text, both sides, within a token budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graphctx.retrieve.deadline import within
from graphctx.retrieve.gate import is_visible, recheck_visible
from graphctx.store.port import GraphStore, StageTimeout
from graphctx.store.records import ChunkView

__all__ = ["SourceWindow", "read_source_window", "window_around"]

Count = Callable[[str], int]


@dataclass(frozen=True)
class SourceWindow:
    """``text == document_text[start_char:end_char]`` of the cited chunk's version."""

    chunk: ChunkView
    start_char: int
    end_char: int
    text: str
    used_tokens: int
    # More *visible* text exists beyond the window (hidden text never sets these).
    truncated_before: bool
    truncated_after: bool


async def read_source_window(
    store: GraphStore,
    namespace: str,
    chunk_id: str,
    scopes: frozenset[str],
    max_tokens: int,
    count: Count,
    deadline_at: float,
) -> SourceWindow | None:
    """The cited chunk widened within ``max_tokens``, or ``None`` when it is not visible."""
    try:
        found = await within(
            deadline_at, store.fetch_chunks(namespace, [chunk_id], scopes, deadline_at)
        )
    except StageTimeout:
        found = []
    cited = next((c for c in found if c.chunk_id == chunk_id and is_visible(c, scopes)), None)
    if cited is None:
        return None
    listed = await store.document_chunks(namespace, cited.document_id)
    try:
        rechecked = await recheck_visible(store, namespace, listed, scopes, deadline_at)
    except StageTimeout:
        rechecked = []
    same_version = [c for c in rechecked if _same_version(c, cited) and is_visible(c, scopes)]
    return window_around(cited, same_version, max_tokens, count)


def window_around(
    cited: ChunkView, visible: Sequence[ChunkView], max_tokens: int, count: Count
) -> SourceWindow:
    """The cited chunk's span inside the contiguous visible text around it, within
    ``max_tokens``: the chunk first (cut at the budget when it alone exceeds it), then as
    much text before and after as the rest of the budget holds, shared between the sides.
    Every candidate window is counted whole, so the result never exceeds the budget."""
    start, _, text = _contiguous(cited, visible)
    lo, hi = cited.start_char - start, cited.end_char - start
    core = _longest(hi - lo, max_tokens, lambda n: count(text[lo : lo + n]))
    first, last = lo, lo + core
    if last == hi:  # the whole chunk fits: widen it, half the rest of the budget each side
        half = count(text[lo:hi]) + (max_tokens - count(text[lo:hi])) // 2
        first = lo - _longest(lo, half, lambda n: count(text[lo - n : hi]))
        last = hi + _longest(len(text) - hi, max_tokens, lambda n: count(text[first : hi + n]))
        if last == len(text):  # the end is reached: the rest goes to the start
            first = lo - _longest(lo, max_tokens, lambda n: count(text[lo - n : last]))
    window = text[first:last]
    return SourceWindow(
        chunk=cited,
        start_char=start + first,
        end_char=start + last,
        text=window,
        used_tokens=count(window),
        truncated_before=first > 0,
        truncated_after=last < len(text),
    )


def _same_version(chunk: ChunkView, cited: ChunkView) -> bool:
    return (
        chunk.document_id == cited.document_id
        and chunk.document_version == cited.document_version
        and chunk.source_uri == cited.source_uri
        and len(chunk.text) == chunk.end_char - chunk.start_char
    )


def _contiguous(cited: ChunkView, visible: Sequence[ChunkView]) -> tuple[int, int, str]:
    """The run of visible text (the cited chunk included) that contains the cited chunk."""
    start, end, text = cited.start_char, cited.end_char, cited.text
    grew = True
    chunks = sorted(visible, key=lambda c: (c.start_char, c.end_char))
    while grew:
        grew = False
        for chunk in chunks:
            if chunk.start_char < start <= chunk.end_char:
                text = chunk.text[: start - chunk.start_char] + text
                start, grew = chunk.start_char, True
            if chunk.start_char <= end < chunk.end_char:
                text = text + chunk.text[end - chunk.start_char :]
                end, grew = chunk.end_char, True
    return start, end, text


def _longest(size: int, budget: int, cost: Callable[[int], int]) -> int:
    """The largest ``n <= size`` found with ``cost(n) <= budget`` (0 when none is)."""
    if budget <= 0:
        return 0
    if cost(size) <= budget:
        return size
    lo, hi = 0, size  # cost(lo) <= budget < cost(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid
    return lo
