"""The chunker on hostile text: spans stay exact, cover the text, and come back fast."""

from __future__ import annotations

from collections.abc import Sequence

import fuzz_targets
from bounded import BoundedWorker, Raised
from hypothesis import given
from hypothesis import strategies as st
from profiles import fuzz_settings

from graphctx.ingest.chunking import DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, DEFAULT_TARGET_CHARS
from graphctx.ingest.source import ChunkSpan, MediaType

NO_SURROGATES = st.characters(codec="utf-8")  # every code point but lone surrogates
MARKUP = (
    "\n", "\r\n", "\r", "\0", "\t", " ", "\n\n", "\u00a0", "\u2028", "\u200b", "\u200d",
    "\u0301", "\u1161", "\u3002", "\uff01", "\u2460 ", "# ", "###### ", "####### ", "#",
    "```", "```python\n", "````\n", "~~~\n", "~~~~~\n", "``` `x`\n", "| a | b |\n",
    "|---|---|\n", "> ", "- ", "1. ", "def f():\n", "@decorator\n", "class X:\n",
    "pub(crate) fn x() {}\n", "// note\n", "/* note */\n", ". ", "! ", "? ", "\"). ",
)  # fmt: skip


def _repeated(unit: str, count: int) -> str:
    return unit * count


FRAGMENTS = st.one_of(
    st.text(NO_SURROGATES, max_size=200),
    st.sampled_from(MARKUP),
    st.builds(_repeated, st.text(NO_SURROGATES, min_size=1, max_size=3), st.integers(50, 3000)),
    st.builds(_repeated, st.sampled_from(MARKUP), st.integers(10, 500)),
    st.integers(1, 300).map(lambda depth: "> " * depth + "deep\n"),
    st.integers(1, 300).map(lambda depth: "  " * depth + "- item\n"),
)
DOCUMENTS = st.lists(FRAGMENTS, max_size=30).map("".join)
SIZES = st.integers(1, 500).flatmap(
    lambda max_chars: st.tuples(st.integers(1, max_chars), st.just(max_chars), st.integers(0, 600))
)


def assert_exact_cover(text: str, chunks: Sequence[ChunkSpan], max_chars: int) -> None:
    """Spans slice the text exactly, in order, without overlap, and leave out only spaces."""
    assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))
    previous_end = 0
    for chunk in chunks:
        assert chunk.text == text[chunk.start_char : chunk.end_char]
        assert chunk.text, "an empty chunk"
        assert (chunk.text[0].isspace(), chunk.text[-1].isspace()) == (False, False)
        assert len(chunk.text) <= max_chars
        assert previous_end <= chunk.start_char, "chunks overlap or run backwards"
        gap = text[previous_end : chunk.start_char]
        assert gap.isspace() or not gap, f"text left out between chunks: {gap[:40]!r}"
        previous_end = chunk.end_char
    tail = text[previous_end:]
    assert tail.isspace() or not tail, f"text left out at the end: {tail[:40]!r}"


@fuzz_settings()
@given(text=DOCUMENTS, media_type=st.sampled_from(MediaType), sizes=SIZES)
def test_any_text_is_cut_into_exact_spans_that_cover_it(
    worker: BoundedWorker, text: str, media_type: MediaType, sizes: tuple[int, int, int]
) -> None:
    target, max_chars, min_chars = sizes
    chunks = worker.call(fuzz_targets.chunk_text, text, media_type, target, max_chars, min_chars)
    assert not isinstance(chunks, Raised), chunks
    assert isinstance(chunks, list)
    assert_exact_cover(text, chunks, max_chars)


ADVERSARIAL_UNITS = (
    "\u0301", "\u200d", "\u1161", "#", "# x #\n", "```\n", "~~~ a\n", "|", "| x\n",
    "\n \n", " ", ".", "a.", "@\n", "#\ndef f(): pass\n", "\u2460", "x" * 70 + "\n",
)  # fmt: skip


@fuzz_settings(share=0.2)
@given(
    unit=st.sampled_from(ADVERSARIAL_UNITS),
    count=st.integers(10_000, 60_000),
    media_type=st.sampled_from(MediaType),
)
def test_huge_repetitive_documents_chunk_within_the_hang_timeout(
    worker: BoundedWorker, unit: str, count: int, media_type: MediaType
) -> None:
    """Up to a few hundred thousand characters of one pathological unit, default sizes: a
    quadratic cut (a run of combining marks took 26 s for 50,000 marks) trips the timeout."""
    text = "a" + unit * count
    chunks = worker.call(
        fuzz_targets.chunk_text,
        text,
        media_type,
        DEFAULT_TARGET_CHARS,
        DEFAULT_MAX_CHARS,
        DEFAULT_MIN_CHARS,
    )
    assert not isinstance(chunks, Raised), chunks
    assert isinstance(chunks, list)
    assert_exact_cover(text, chunks, DEFAULT_MAX_CHARS)
