from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.frontmatter import (
    FRONT_MATTER_INVALID,
    merge_metadata,
    metadata_from_mapping,
    split_front_matter,
)
from graphctx.ingest.source import DocumentMetadata

SCOPES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,20}", fullmatch=True)
# PyYAML's emitter writes NEL and the Unicode line/paragraph separators raw; its reader folds them.
YAML_SAFE_CHARS = st.characters(exclude_characters="\x85\u2028\u2029")
WORDS = st.text(YAML_SAFE_CHARS, min_size=1, max_size=30).map(str.strip).filter(bool)
MOMENTS = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


def test_document_without_front_matter_is_returned_unchanged() -> None:
    raw = "# Title\r\n\r\n---\r\nnot front matter\r\n"

    assert split_front_matter(raw) == (DocumentMetadata(), raw)


def test_recognised_keys_become_typed_metadata() -> None:
    raw = (
        "---\n"
        "document_id: runbook-7\n"
        "source_uri: https://wiki.example/runbook-7\n"
        "scopes: [eng, 'ops:oncall']\n"
        "source_version: 3\n"
        "title: Restart the gateway\n"
        "created_at: 2024-01-02\n"
        "updated_at: 2024-01-03T04:05:06\n"
        "valid_from: '2024-02-01T09:00:00+09:00'\n"
        "valid_to: 2025-01-01T00:00:00Z\n"
        "superseded_by: runbook-8\n"
        "owner: sam\n"
        "tags: [a, b]\n"
        "reviewed: true\n"
        "---\n"
        "body\n"
    )

    metadata, body = split_front_matter(raw)

    assert body == "body\n"
    assert metadata == DocumentMetadata(
        document_id="runbook-7",
        source_uri="https://wiki.example/runbook-7",
        scopes=("eng", "ops:oncall"),
        source_version="3",
        title="Restart the gateway",
        created_at=datetime(2024, 1, 2, tzinfo=UTC),
        updated_at=datetime(2024, 1, 3, 4, 5, 6, tzinfo=UTC),
        valid_from=datetime(2024, 2, 1, 0, 0, tzinfo=UTC),
        valid_to=datetime(2025, 1, 1, tzinfo=UTC),
        superseded_by="runbook-8",
        extra={"owner": "sam", "tags": '["a", "b"]', "reviewed": "true"},
    )


def test_body_keeps_crlf_and_loses_exactly_one_newline_after_the_closing_line() -> None:
    metadata, body = split_front_matter("---\r\ntitle: x\r\n---\r\n\r\nline\r\n")

    assert (metadata.title, body) == ("x", "\r\nline\r\n")


def test_empty_front_matter_gives_empty_metadata() -> None:
    assert split_front_matter("---\n---\nbody") == (DocumentMetadata(), "body")


def test_a_single_scope_string_becomes_a_one_scope_tuple() -> None:
    metadata, _ = split_front_matter("---\nscopes: eng\n---\n")

    assert metadata.scopes == ("eng",)


def test_an_empty_title_counts_as_absent() -> None:
    assert metadata_from_mapping({"title": ""}, "r").title is None


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("---\ntitle: x\n", "not closed"),
        ("---\ntitle: [x\n---\n", "invalid YAML"),
        ("---\n- a\n- b\n---\n", "mapping"),
        ("---\ntitle: [x]\n---\n", "'title'"),
        ("---\nvalid_from: yesterday\n---\n", "'valid_from'"),
        ("---\ncreated_at: 12\n---\n", "'created_at'"),
        ("---\nscopes: [eng, 'bad scope']\n---\n", "'scopes'"),
        ("---\nscopes: [eng, 7]\n---\n", "'scopes'"),
        ("---\nscopes: 'eng\n\n'\n---\n", "'scopes'"),
        ("---\nvalid_from: 2025-01-01\nvalid_to: 2024-01-01\n---\n", "'valid_to'"),
        ("---\nbase: &a [1]\ncopy: *a\n---\n", "aliases"),
        ("---\n1: one\n---\n", "'1'"),
    ],
)
def test_broken_front_matter_is_rejected_with_a_reason(raw: str, named: str) -> None:
    with pytest.raises(InvalidDocumentError) as caught:
        split_front_matter(raw, origin="doc.md")

    assert (caught.value.code, caught.value.path) == (FRONT_MATTER_INVALID, "doc.md")
    assert named in caught.value.message


def test_metadata_errors_carry_the_callers_code() -> None:
    with pytest.raises(InvalidDocumentError) as caught:
        metadata_from_mapping({"title": {"a": 1}}, "x.json", code="record_invalid")

    assert caught.value.code == "record_invalid"


def test_naive_and_offset_datetimes_are_returned_in_utc() -> None:
    seoul = timezone(timedelta(hours=9))
    metadata = metadata_from_mapping(
        {
            "created_at": datetime(2024, 1, 1, 12),
            "updated_at": datetime(2024, 1, 1, 9, tzinfo=seoul),
        },
        "r",
    )

    assert metadata.created_at == datetime(2024, 1, 1, 12, tzinfo=UTC)
    assert metadata.updated_at is not None
    assert metadata.updated_at.utcoffset() == timedelta(0)
    assert metadata.updated_at == datetime(2024, 1, 1, 0, tzinfo=UTC)


def test_override_metadata_wins_field_by_field() -> None:
    base = DocumentMetadata(
        document_id="a", title="Base", scopes=("x",), extra={"k": "1", "j": "2"}
    )
    override = DocumentMetadata(title="Override", extra={"k": "9"})

    assert merge_metadata(base, override) == DocumentMetadata(
        document_id="a", title="Override", scopes=("x",), extra={"k": "9", "j": "2"}
    )


@given(
    document_id=WORDS,
    title=WORDS,
    scopes=st.lists(SCOPES, min_size=1, max_size=4, unique=True),
    created_at=MOMENTS,
    extra=st.dictionaries(st.from_regex(r"x_[a-z]{1,8}", fullmatch=True), WORDS, max_size=3),
    body=st.text(max_size=200),
)
def test_front_matter_round_trips_through_yaml(
    document_id: str,
    title: str,
    scopes: list[str],
    created_at: datetime,
    extra: dict[str, str],
    body: str,
) -> None:
    fields = {"document_id": document_id, "title": title, "scopes": scopes}
    dumped = yaml.safe_dump(
        {**fields, "created_at": created_at.isoformat(), **extra}, allow_unicode=True
    )

    metadata, parsed_body = split_front_matter(f"---\n{dumped}---\n{body}")

    assert parsed_body == body
    assert metadata == DocumentMetadata(
        document_id=document_id,
        title=title,
        scopes=tuple(scopes),
        created_at=created_at,
        extra=extra,
    )
