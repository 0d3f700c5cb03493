from __future__ import annotations

import pytest

from graphctx.ingest.extract.references import (
    ReferenceKind,
    find_references,
    parse_article_label,
)


def targets(text: str) -> list[tuple[str, str, str | None]]:
    return [(r.kind.value, r.target, r.law) for r in find_references(text)]


def test_korean_article_references_with_paragraphs_and_sub_articles() -> None:
    text = "제23조제1항에 따른 해고와 제76조의2 및 제 26 조를 준용한다."
    assert targets(text) == [
        ("article", "23", None),
        ("article", "76-2", None),
        ("article", "26", None),
    ]
    assert find_references(text)[0].paragraph == "1"


def test_a_bare_paragraph_is_not_an_article_reference() -> None:
    assert targets("제1항에 따른 통지는 서면으로 한다.") == []


def test_other_laws_same_law_and_this_law() -> None:
    text = "「근로자퇴직급여 보장법」 제8조, 같은 법 제9조 및 이 법 제28조"
    assert targets(text) == [
        ("article", "8", "근로자퇴직급여 보장법"),
        ("article", "9", "근로자퇴직급여 보장법"),
        ("article", "28", None),
    ]


def test_a_range_refers_to_every_article_in_it() -> None:
    found = targets("제23조부터 제26조까지의 규정")
    assert [t for _, t, _ in found] == ["23", "24", "25", "26"]


def test_english_articles_and_sections() -> None:
    text = "As required by Article 5(2) and Section 3(b), see also § 12."
    assert targets(text) == [
        ("article", "5", None),
        ("section", "3", None),
        ("section", "12", None),
    ]


def test_markdown_links_resolve_relative_to_the_document() -> None:
    text = "See [failover](../runbooks/database-failover.md#steps), [web](https://x.io/a.md)."
    found = find_references(text, own_path="adr/0001-postgres.md")
    assert [(r.kind, r.target) for r in found] == [
        (ReferenceKind.LINK, "runbooks/database-failover.md")
    ]


@pytest.mark.parametrize(
    ("label", "parsed"),
    [
        ("제23조", (ReferenceKind.ARTICLE, "23")),
        ("제76조의2", (ReferenceKind.ARTICLE, "76-2")),
        ("Article 5", (ReferenceKind.ARTICLE, "5")),
        ("Section 3A", (ReferenceKind.SECTION, "3a")),
        ("12", (ReferenceKind.ARTICLE, "12")),
        ("preamble", None),
    ],
)
def test_article_labels_parse_to_the_same_keys_as_references(
    label: str, parsed: tuple[ReferenceKind, str] | None
) -> None:
    assert parse_article_label(label) == parsed
