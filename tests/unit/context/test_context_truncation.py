from __future__ import annotations

from context_strategies import SEGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.context.truncation import cuts_start_at, fit_prefix, safe_cut_points


def prefixes(text: str) -> list[str]:
    return [text[:k] for k in safe_cut_points(text)]


def test_korean_and_english_sentence_ends_are_cut_points() -> None:
    text = "해고는 서면으로 통지한다. 예고는 30일 전에 한다! Notice is required. Is pay owed? 네."
    assert prefixes(text) == [
        "해고는 서면으로 통지한다.",
        "해고는 서면으로 통지한다. 예고는 30일 전에 한다!",
        "해고는 서면으로 통지한다. 예고는 30일 전에 한다! Notice is required.",
        "해고는 서면으로 통지한다. 예고는 30일 전에 한다! Notice is required. Is pay owed?",
    ]


def test_decimals_abbreviations_initials_and_list_numbers_are_not_sentence_ends() -> None:
    text = "Pressure is 2.5 bar, e.g. at rest. Dr. Kim and J. Lee agreed.\n1. First step here"
    assert prefixes(text) == [
        "Pressure is 2.5 bar, e.g. at rest.",
        "Pressure is 2.5 bar, e.g. at rest. Dr. Kim and J. Lee agreed.",
    ]


def test_korean_line_ending_without_punctuation_is_a_cut_point() -> None:
    text = "신청 기간은 3개월이다\n다음 단계로 넘어간다"
    assert prefixes(text) == ["신청 기간은 3개월이다"]


def test_never_cuts_inside_a_fenced_code_block() -> None:
    text = (
        "Run this. Then wait.\n```python\nx = 1. \ny = 2. \n```\nDone. Really done.\n"
        "~~~\nunclosed. fence. runs to the end.\n"
    )
    cuts = prefixes(text)
    assert cuts == [
        "Run this.",
        "Run this. Then wait.",
        "Run this. Then wait.\n```python\nx = 1. \ny = 2. \n```",
        "Run this. Then wait.\n```python\nx = 1. \ny = 2. \n```\nDone.",
        "Run this. Then wait.\n```python\nx = 1. \ny = 2. \n```\nDone. Really done.",
    ]


def test_never_cuts_inside_a_markdown_table_row() -> None:
    text = "| 항목 | 기준. 값 |\n|---|---|\n| 온도 | 88도. 초과 시 정지 |\nAfter the table."
    assert prefixes(text) == [
        "| 항목 | 기준. 값 |",
        "| 항목 | 기준. 값 |\n|---|---|",
        "| 항목 | 기준. 값 |\n|---|---|\n| 온도 | 88도. 초과 시 정지 |",
    ]


def test_a_row_without_its_closing_pipe_is_cut_only_at_its_line_end() -> None:
    # GFM makes the closing pipe optional: the sentence is the row's last cell, not prose.
    text = "| 압력 | 2.5 bar | 초과 시 정지합니다. 다시 켭니다.\nAfter the table."
    assert prefixes(text) == ["| 압력 | 2.5 bar | 초과 시 정지합니다. 다시 켭니다."]


def test_list_items_and_paragraphs_end_elements() -> None:
    text = "# 절차\n- 서면 통지를 한다\n- 30일 전에 예고\nwrapped line\n\nNext paragraph"
    assert prefixes(text) == [
        "# 절차",
        "# 절차\n- 서면 통지를 한다",
        "# 절차\n- 서면 통지를 한다\n- 30일 전에 예고\nwrapped line",
    ]


def test_fit_prefix_takes_the_longest_safe_prefix_that_fits() -> None:
    text = "One. Two two. Three three three. Four."
    assert text[: fit_prefix(text, lambda p: len(p) <= 20)] == "One. Two two."
    assert fit_prefix(text, lambda p: len(p) <= 3) == 0
    assert fit_prefix("no boundary at all", lambda p: True) == 0


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*SEGMENTS, " ", "\n", "\n\n", "  \n", "\t", "|", "```"]),
                max_size=8).map("".join) | st.text(max_size=60))  # fmt: skip
def test_no_safe_cut_is_below_where_cuts_start(text: str) -> None:
    start = cuts_start_at(text)
    assert all(cut >= start for cut in safe_cut_points(text)), start


def test_cuts_start_after_the_first_mark_or_at_the_end_of_the_first_line_with_content() -> None:
    assert cuts_start_at("Short line\nThe rest. More.") == len("Short line")
    assert cuts_start_at("  \n\n  The rest. More.") == len("  \n\n  The rest.")
    assert cuts_start_at("No mark at all") == len("No mark at all")
    assert safe_cut_points("Stop. Go.")[0] == cuts_start_at("Stop. Go.")
