from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphctx.ingest.chunking import chunk_document
from graphctx.ingest.source import ChunkSpan, DocumentMetadata, MediaType, SourceDocument

FRAGMENTS = [
    "# Title\n",
    "## 제1장 총칙\r\n",
    "### Deep ###\n",
    "\n\n",
    "\r\n",
    "\n",
    "```python\ndef f():\n\n    return 1\n```\n",
    "~~~\n# not a heading\n~~~\n",
    "```unclosed\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "이 법은 근로조건의 기준을 정한다. ",
    "근로자는 요청할 수 있어요. ",
    "Hello world. ",
    "Is it? Yes! ",
    "① 사용자는 근로자를 해고하지 못한다.\n",
    "② 근로자는 ",
    "日本語です。中文\uff01",
    "😀👍🏽👨\u200d👩\u200d👧",
    "e\u0301\u0302",
    "def handler(event):\n",
    "@decorator\n",
    "class Foo:\n",
    "    pass\n",
    "func main() {\n}\n",
    "\t",
    "   ",
    "\u00a0\u2028\u3000",
    "x" * 60,
    "word " * 12,
]
TEXTS = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=30)), max_size=50).map(
    "".join
)


@st.composite
def sizes(draw: st.DrawFn) -> tuple[int, int, int]:
    max_chars = draw(st.integers(min_value=1, max_value=300))
    target_chars = draw(st.integers(min_value=1, max_value=max_chars))
    min_chars = draw(st.integers(min_value=0, max_value=target_chars))
    return target_chars, max_chars, min_chars


def document(text: str, media_type: MediaType = MediaType.MARKDOWN) -> SourceDocument:
    return SourceDocument("test", media_type, text, DocumentMetadata())


def chunk(doc: SourceDocument, size: tuple[int, int, int]) -> list[ChunkSpan]:
    target_chars, max_chars, min_chars = size
    return chunk_document(doc, target_chars=target_chars, max_chars=max_chars, min_chars=min_chars)


MEDIA_TYPES = st.sampled_from(list(MediaType))


@given(text=TEXTS, media_type=MEDIA_TYPES, size=sizes())
def test_chunk_text_equals_its_span_in_the_document(
    text: str, media_type: MediaType, size: tuple[int, int, int]
) -> None:
    for span in chunk(document(text, media_type), size):
        assert span.text == text[span.start_char : span.end_char]


@given(text=TEXTS, media_type=MEDIA_TYPES, size=sizes())
def test_chunks_are_ordered_non_overlapping_and_numbered_from_zero(
    text: str, media_type: MediaType, size: tuple[int, int, int]
) -> None:
    spans = chunk(document(text, media_type), size)

    assert [span.ordinal for span in spans] == list(range(len(spans)))
    bounds = [(span.start_char, span.end_char) for span in spans]
    assert all(start < end for start, end in bounds)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in pairwise(bounds))


@given(text=TEXTS, media_type=MEDIA_TYPES, size=sizes())
def test_no_chunk_exceeds_max_chars_or_starts_or_ends_with_whitespace(
    text: str, media_type: MediaType, size: tuple[int, int, int]
) -> None:
    for span in chunk(document(text, media_type), size):
        assert len(span.text) <= size[1]
        assert not span.text[0].isspace()
        assert not span.text[-1].isspace()


@given(text=TEXTS, media_type=MEDIA_TYPES, size=sizes())
def test_every_non_whitespace_character_is_inside_some_chunk(
    text: str, media_type: MediaType, size: tuple[int, int, int]
) -> None:
    covered = [False] * len(text)
    for span in chunk(document(text, media_type), size):
        covered[span.start_char : span.end_char] = [True] * (span.end_char - span.start_char)

    assert [i for i, char in enumerate(text) if not char.isspace() and not covered[i]] == []


@given(
    before=st.lists(st.sampled_from(FRAGMENTS[10:17]), max_size=30).map("".join),
    code=st.lists(st.sampled_from(["x = 1\n", "\n", "# comment\n", "  y\r\n"]), max_size=20),
    after=st.lists(st.sampled_from(FRAGMENTS[10:17]), max_size=30).map("".join),
)
def test_a_code_fence_that_fits_is_never_split(before: str, code: list[str], after: str) -> None:
    fence = "```sh\n" + "".join(code) + "```"
    text = f"{before}\n\n{fence}\n\n{after}"
    start = text.index(fence)

    target = max(1, len(fence) // 2)

    spans = chunk_document(
        document(text), target_chars=target, max_chars=len(fence), min_chars=target // 2
    )

    assert any(s.start_char <= start and start + len(fence) <= s.end_char for s in spans)


def test_heading_path_is_the_stack_of_enclosing_headings() -> None:
    text = "# Guide\n\n## Install\n\nRun it.\n\n### Linux\n\nUse apt.\n\n## Use\n\nCall it.\n"

    spans = chunk_document(document(text), target_chars=20, max_chars=40, min_chars=0)

    assert [(s.text, s.heading_path) for s in spans] == [
        ("# Guide", ("Guide",)),
        ("## Install\n\nRun it.", ("Guide", "Install")),
        ("### Linux\n\nUse apt.", ("Guide", "Install", "Linux")),
        ("## Use\n\nCall it.", ("Guide", "Use")),
    ]


def test_tiny_sections_merge_forward_and_keep_the_common_heading_path() -> None:
    text = "# Guide\n\n## Install\n\nRun it.\n\n## Use\n\nCall it.\n"

    spans = chunk_document(document(text), target_chars=100, max_chars=200, min_chars=50)

    assert [(s.text, s.heading_path) for s in spans] == [(text.strip(), ("Guide",))]


def test_a_heading_inside_a_code_fence_is_not_a_heading() -> None:
    text = "# Real\n\n```\n# not a heading\n```\n"

    spans = chunk_document(document(text), target_chars=10, max_chars=30, min_chars=0)

    assert [s.heading_path for s in spans] == [("Real",), ("Real",)]


def test_a_long_statute_article_splits_between_circled_paragraphs() -> None:
    paragraphs = [f"{marker} " + "근로자는 임금을 받는다. " * 30 for marker in "①②③④"]
    text = "\n".join(paragraphs)

    spans = chunk_document(document(text, MediaType.RECORD), target_chars=900, max_chars=1000)

    assert [s.text for s in spans] == [
        "\n".join(paragraphs[:2]).strip(),
        "\n".join(paragraphs[2:]).strip(),
    ]


def test_a_long_paragraph_splits_at_korean_and_english_sentence_ends() -> None:
    text = "가나다라마바사 요청합니다. " * 5 + "This is English. " * 5 + "中文句子。" * 5

    spans = chunk_document(
        document(text, MediaType.TEXT), target_chars=40, max_chars=50, min_chars=0
    )

    assert all(s.text[-1] in ".。" for s in spans)


def test_text_without_any_boundary_is_hard_split_at_whitespace_then_anywhere() -> None:
    text = "aaaa bbbb cccc " + "x" * 25

    spans = chunk_document(document(text, MediaType.TEXT), target_chars=8, max_chars=10)

    assert [s.text for s in spans] == ["aaaa bbbb", "cccc", "x" * 10, "x" * 10, "x" * 5]


def test_a_hard_split_does_not_separate_combining_marks_from_their_base() -> None:
    text = "abcde\u0301fgh"

    spans = chunk_document(document(text, MediaType.TEXT), target_chars=5, max_chars=5)

    assert [s.text for s in spans] == ["abcd", "e\u0301fgh"]


def test_code_splits_at_top_level_definitions_with_their_decorators() -> None:
    first = "import os\n\n\n@cached\ndef load():\n    return os.environ\n"
    second = "# builds it\nclass Builder:\n    def build(self):\n        return 1\n"
    text = first + "\n\n" + second

    spans = chunk_document(
        document(text, MediaType.CODE), target_chars=60, max_chars=80, min_chars=0
    )

    assert [s.text for s in spans] == [
        "import os",
        "@cached\ndef load():\n    return os.environ",
        second.strip(),
    ]


def test_a_whitespace_only_document_has_no_chunks() -> None:
    assert chunk_document(document(" \r\n\t\u3000")) == []


@pytest.mark.parametrize(("target", "maximum", "minimum"), [(10, 5, 0), (10, 20, -1), (0, 0, 0)])
def test_inconsistent_chunk_sizes_are_rejected(target: int, maximum: int, minimum: int) -> None:
    with pytest.raises(ValueError, match="target_chars"):
        chunk_document(document("x"), target_chars=target, max_chars=maximum, min_chars=minimum)
