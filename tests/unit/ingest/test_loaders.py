from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphctx.ingest.loaders import LoadResult, load_path
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def only_document(
    path: Path, *, text_field: str | None = None, id_field: str | None = None
) -> SourceDocument:
    results = list(load_path(path, text_field=text_field, id_field=id_field))
    assert [result.error for result in results] == [None]
    document = results[0].document
    assert document is not None
    return document


def error_codes(results: list[LoadResult]) -> list[str | None]:
    return [None if result.error is None else result.error.code for result in results]


def test_markdown_front_matter_becomes_metadata_and_the_body_becomes_text(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "a.md", "---\ntitle: A\nscopes: eng\n---\n# A\n\nBody.\n")

    document = only_document(path)

    assert document == SourceDocument(
        origin=str(path),
        media_type=MediaType.MARKDOWN,
        text="# A\n\nBody.\n",
        metadata=DocumentMetadata(title="A", scopes=("eng",)),
    )


def test_bom_is_stripped_and_crlf_is_kept_exactly(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", "\ufeffline one\r\nline two\r\n")

    assert only_document(path).text == "line one\r\nline two\r\n"


def test_source_code_loads_as_code_with_a_language_hint(tmp_path: Path) -> None:
    path = write(tmp_path / "svc.py", "---\ndef f():\n    return 1\n")

    document = only_document(path)

    assert (document.media_type, document.language_hint) == (MediaType.CODE, "python")
    assert document.text.startswith("---\n")


def test_folder_walk_is_sorted_skips_hidden_and_sidecar_files_and_reports_unsupported_ones(
    tmp_path: Path,
) -> None:
    write(tmp_path / "b.md", "b")
    write(tmp_path / "a" / "z.txt", "z")
    write(tmp_path / "a" / "y.rst", "y")
    write(tmp_path / ".hidden" / "x.md", "x")
    write(tmp_path / ".x.md", "x")
    write(tmp_path / "b.md.meta.yaml", "title: B\n")
    write(tmp_path / "image.png", b"\x89PNG")

    results = list(load_path(tmp_path))

    assert [Path(result.origin).relative_to(tmp_path).as_posix() for result in results] == [
        "a/y.rst",
        "a/z.txt",
        "b.md",
        "image.png",
    ]
    assert error_codes(results) == [None, None, None, None]
    assert [result.skipped for result in results] == [
        None,
        None,
        None,
        "unsupported file type '.png'",
    ]


def test_sidecar_metadata_overrides_front_matter(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", "---\ntitle: Old\nscopes: eng\nowner: amy\n---\nbody\n")
    write(tmp_path / "a.md.meta.json", json.dumps({"title": "New", "team": "ops"}))

    metadata = only_document(path).metadata

    assert metadata == DocumentMetadata(
        title="New", scopes=("eng",), extra={"owner": "amy", "team": "ops"}
    )


def test_json_array_gives_one_record_per_object(tmp_path: Path) -> None:
    records = [
        {"id": 7, "title": "Seven", "content": "seven", "valid_from": "2024-05-01"},
        {"document_id": "eight", "body": "eight", "law": "근로기준법"},
    ]
    path = write(tmp_path / "r.json", json.dumps(records, ensure_ascii=False))

    documents = [result.document for result in load_path(path)]

    assert documents == [
        SourceDocument(
            f"{path}#0",
            MediaType.RECORD,
            "seven",
            DocumentMetadata(
                document_id="7", title="Seven", valid_from=datetime(2024, 5, 1, tzinfo=UTC)
            ),
            locator="0",
        ),
        SourceDocument(
            f"{path}#1",
            MediaType.RECORD,
            "eight",
            DocumentMetadata(document_id="eight", extra={"law": "근로기준법"}),
            locator="1",
        ),
    ]


def test_a_bad_jsonl_line_is_reported_with_its_line_number_and_the_rest_proceeds(
    tmp_path: Path,
) -> None:
    lines = ['{"id": "a", "text": "one"}', "{broken", "", '{"id": "c", "text": "three"}']
    path = write(tmp_path / "r.jsonl", "\r\n".join(lines) + "\r\n")

    results = list(load_path(path))

    assert error_codes(results) == [None, "json_invalid", None]
    assert [result.origin for result in results] == [f"{path}#L1", f"{path}#L2", f"{path}#L4"]
    assert results[1].error is not None
    assert "line 2" in results[1].error.message
    assert [r.document.text for r in results if r.document] == ["one", "three"]


def test_text_and_id_fields_are_configurable(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"key": "k1", "article": "text", "text": "other"}\n')

    document = only_document(path, text_field="article", id_field="key")

    assert (document.text, document.metadata.document_id) == ("text", "k1")
    assert document.metadata.extra == {"text": "other"}


def test_a_sidecar_applies_to_every_record(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"text": "a"}\n{"text": "b"}\n')
    write(tmp_path / "r.jsonl.meta.yml", "scopes: [legal]\n")

    assert [r.document.metadata.scopes for r in load_path(path) if r.document] == [
        ("legal",),
        ("legal",),
    ]


@pytest.mark.parametrize(
    ("name", "content", "code", "detail"),
    [
        ("bin.txt", b"abc\x00def", "binary_file", "NUL"),
        ("bad.md", b"ok \xe2\x82 broken", "invalid_utf8", "byte offset 3"),
        ("bom-bad.txt", b"\xef\xbb\xbfab\xff", "invalid_utf8", "byte offset 5"),
        ("blank.md", " \r\n\t\n", "empty_document", "whitespace"),
        ("only-front.md", "---\ntitle: x\n---\n\n", "empty_document", "whitespace"),
        ("yaml.md", "---\ntitle: [x\n---\nbody", "front_matter_invalid", "YAML"),
        ("date.md", "---\nvalid_to: soon\n---\nbody", "front_matter_invalid", "valid_to"),
        ("scope.md", "---\nscopes: ['a b']\n---\nbody", "front_matter_invalid", "scopes"),
        ("unclosed.md", "---\ntitle: x\nbody", "front_matter_invalid", "not closed"),
        ("image.png", b"\x89PNG", "unsupported_type", ".png"),
        ("doc.pdf", b"%PDF", "pdf_invalid", "not a readable PDF"),
        ("doc.docx", b"%PDF", "docx_invalid", "not a zip archive"),
        ("page.html", b"<script>x()</script><nav>Home</nav>", "empty_document", "no text"),
        ("r.json", "{not json", "json_invalid", "invalid JSON"),
        ("s.json", '"just a string"', "record_invalid", "str"),
        ("t.json", '{"title": "no text"}', "record_invalid", "text/content/body"),
        ("u.json", '{"text": 5}', "record_invalid", "'text'"),
        ("v.json", '{"text": "x", "scopes": "bad scope"}', "record_invalid", "scopes"),
        ("e.json", "[]", "empty_document", "no records"),
        ("w.jsonl", '{"text": "  "}\n', "empty_document", "whitespace"),
    ],
)
def test_a_bad_file_is_reported_with_a_stable_code_and_a_reason(
    tmp_path: Path, name: str, content: str | bytes, code: str, detail: str
) -> None:
    path = write(tmp_path / name, content)

    results = list(load_path(path))

    assert error_codes(results) == [code]
    assert results[0].error is not None
    assert detail in results[0].error.message


def test_an_oversize_file_is_rejected_before_reading(tmp_path: Path) -> None:
    path = write(tmp_path / "big.txt", "x" * 11)

    results = list(load_path(path, max_bytes=10))

    assert error_codes(results) == ["file_too_large"]


def test_a_missing_path_is_reported(tmp_path: Path) -> None:
    assert error_codes(list(load_path(tmp_path / "nope.md"))) == ["file_not_found"]


@pytest.mark.parametrize(
    ("sidecars", "detail"),
    [
        ({"a.md.meta.yaml": "scopes: ['bad scope']\n"}, "scopes"),
        ({"a.md.meta.json": "[1]"}, "mapping"),
        ({"a.md.meta.yaml": "title: a\n", "a.md.meta.json": "{}"}, "more than one"),
    ],
)
def test_a_broken_sidecar_is_reported(
    tmp_path: Path, sidecars: dict[str, str], detail: str
) -> None:
    path = write(tmp_path / "a.md", "body")
    for name, content in sidecars.items():
        write(tmp_path / name, content)

    results = list(load_path(path))

    assert error_codes(results) == ["sidecar_invalid"]
    assert results[0].error is not None
    assert detail in results[0].error.message


def test_a_record_sidecar_must_not_set_a_document_id(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"text": "a"}\n')
    write(tmp_path / "r.jsonl.meta.yaml", "document_id: same-for-all\n")

    assert error_codes(list(load_path(path))) == ["sidecar_invalid"]


def test_one_bad_file_in_a_folder_does_not_stop_the_others(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "fine")
    write(tmp_path / "b.txt", b"\xff\xfe")
    write(tmp_path / "c.md", "also fine")

    assert error_codes(list(load_path(tmp_path))) == [None, "invalid_utf8", None]
