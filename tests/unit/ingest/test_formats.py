"""The PDF, DOCX and HTML readers on files written here (fpdf2, python-docx, HTML strings)."""

from __future__ import annotations

import html
import io
import json
import re
import zipfile
from pathlib import Path

import docx
import pytest
from fpdf import FPDF
from fpdf.enums import EncryptionMethod
from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.chunking import chunk_document
from graphctx.ingest.formats import docx as docx_format
from graphctx.ingest.formats.docx import read_docx
from graphctx.ingest.formats.html import read_html
from graphctx.ingest.formats.pdf import read_pdf
from graphctx.ingest.loaders import load_path
from graphctx.ingest.pipeline import IngestDefaults, build_document
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument
from graphctx.store.records import PAGE_STARTS_KEY, ChunkView, DocumentDates, page_starts_of

PAGES = (
    "Refund policy. Customers may return goods within 30 days of delivery.",
    "Shipping is free above 50 euros. Parcels leave the warehouse within two days.",
    "Warranty claims go to the manufacturer after the first year.",
)
_HEADING_LINE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?$")


def pdf_bytes(
    pages: tuple[str, ...] = PAGES, *, title: str | None = None, user_password: str | None = None
) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    if title:
        pdf.set_title(title)
    for body in pages:
        pdf.add_page()
        if body:
            pdf.multi_cell(0, 10, body)
        else:
            pdf.rect(10, 10, 50, 50)  # a page with a drawing and no text, like a scan
    if user_password is not None:
        pdf.set_encryption(
            owner_password="owner",
            user_password=user_password,
            encryption_method=EncryptionMethod.RC4,
        )
    return bytes(pdf.output())


def docx_bytes() -> bytes:
    document = docx.Document()
    document.core_properties.title = "Staff handbook"
    document.sections[0].header.paragraphs[0].text = "CONFIDENTIAL header boilerplate"
    document.add_heading("Staff handbook", level=0)
    document.add_heading("Onboarding", level=1)
    document.add_paragraph("New staff get a laptop on day one.")
    document.add_paragraph("# this line is text, not a heading")
    document.add_paragraph("Bring your ID", style="List Bullet")
    document.add_heading("Security", level=2)
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).text = "Badge"
    table.cell(0, 1).text = "Owner"
    table.cell(0, 2).text = "Note"
    table.cell(1, 0).text = "B-1"
    merged = table.cell(1, 1).merge(table.cell(1, 2))
    merged.text = "Amy | ops"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def error_of(read: object, data: bytes) -> InvalidDocumentError:
    with pytest.raises(InvalidDocumentError) as caught:
        read(data, "file")  # type: ignore[operator]
    return caught.value


# --- PDF --------------------------------------------------------------------------------


def test_pdf_text_is_every_page_in_order_with_each_pages_start_offset() -> None:
    extracted = read_pdf(pdf_bytes(title="Store policy"), "policy.pdf")

    assert extracted.media_type is MediaType.PDF
    assert extracted.title == "Store policy"
    assert extracted.text == "\n\n".join(PAGES)
    assert len(extracted.page_starts) == len(PAGES)
    for start, page in zip(extracted.page_starts, PAGES, strict=True):
        assert extracted.text[start : start + len(page)] == page


def test_a_page_without_text_keeps_its_page_number_for_the_pages_after_it() -> None:
    pages = (PAGES[0], "", PAGES[2])

    extracted = read_pdf(pdf_bytes(pages), "scan-page.pdf")

    third = extracted.page_starts[2]
    assert extracted.text[third:] == PAGES[2]
    view = _view(extracted.page_starts)
    assert view.pages(third, len(extracted.text)) == (3, 3)


def test_a_pdf_that_needs_a_password_is_pdf_encrypted() -> None:
    error = error_of(read_pdf, pdf_bytes(user_password="secret"))

    assert (error.code, error.path) == ("pdf_encrypted", "file")


def test_a_pdf_with_only_an_owner_password_is_read() -> None:
    extracted = read_pdf(pdf_bytes((PAGES[0],), user_password=""), "restricted.pdf")

    assert extracted.text == PAGES[0]


@pytest.mark.parametrize(
    "data",
    [b"%PDF-1.7\n", b"not a pdf at all", pdf_bytes()[:200], b"%PDF-1.4\n1 0 obj << /Type /Catalog"],
)
def test_a_corrupt_pdf_is_pdf_invalid(data: bytes) -> None:
    assert error_of(read_pdf, data).code == "pdf_invalid"


def test_a_pdf_without_a_text_layer_is_pdf_no_text() -> None:
    error = error_of(read_pdf, pdf_bytes(("", "")))

    assert error.code == "pdf_no_text"
    assert "OCR" in error.message


@pytest.mark.parametrize(
    ("span", "pages"),
    [
        ((0, 5), (1, 1)),
        ((5, 15), (1, 2)),
        ((10, 12), (2, 2)),
        ((12, 20), (2, 2)),
        ((20, 25), (3, 3)),
    ],
)
def test_a_span_maps_to_the_pages_it_lies_on(span: tuple[int, int], pages: tuple[int, int]) -> None:
    assert _view((0, 10, 20)).pages(*span) == pages


def test_an_unpaged_document_has_no_pages() -> None:
    assert _view(()).pages(0, 10) is None


# --- DOCX -------------------------------------------------------------------------------


def test_docx_paragraphs_headings_lists_and_tables_in_document_order() -> None:
    extracted = read_docx(docx_bytes(), "handbook.docx")

    assert extracted.media_type is MediaType.DOCX
    assert extracted.title == "Staff handbook"
    assert extracted.text == (
        "# Staff handbook\n\n"
        "# Onboarding\n\n"
        "New staff get a laptop on day one.\n\n"
        "\\# this line is text, not a heading\n\n"
        "- Bring your ID\n\n"
        "## Security\n\n"
        "| Badge | Owner | Note |\n"
        "| B-1 | Amy \\| ops |\n"
    )


def test_docx_chunks_split_on_its_headings() -> None:
    extracted = read_docx(docx_bytes(), "handbook.docx")
    source = SourceDocument(
        "handbook.docx", extracted.media_type, extracted.text, DocumentMetadata()
    )

    chunks = chunk_document(source, target_chars=60, min_chars=0)

    assert [chunk.text.partition("\n")[0] for chunk in chunks if chunk.text[0] == "#"] == [
        "# Staff handbook",
        "# Onboarding",
        "## Security",
    ]
    security = next(chunk for chunk in chunks if chunk.text.startswith("## Security"))
    assert "| Badge | Owner | Note |" in security.text
    assert security.heading_path == ("Onboarding", "Security")
    assert all(chunk.text == extracted.text[chunk.start_char : chunk.end_char] for chunk in chunks)


@pytest.mark.parametrize(
    "data", [b"%PDF-1.7 not a zip", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504]
)
def test_a_docx_that_is_not_a_zip_is_docx_invalid(data: bytes) -> None:
    error = error_of(read_docx, data)

    assert error.code == "docx_invalid"
    assert "not a zip archive" in error.message


def test_a_zip_that_is_not_a_word_document_is_docx_invalid() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hello")

    assert error_of(read_docx, buffer.getvalue()).code == "docx_invalid"


def test_a_docx_that_unpacks_beyond_the_limit_is_refused_before_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(docx_format, "MAX_UNCOMPRESSED_BYTES", 1000)

    error = error_of(read_docx, docx_bytes())

    assert error.code == "docx_invalid"
    assert "unpacks to" in error.message


def test_a_docx_without_body_text_is_empty() -> None:
    buffer = io.BytesIO()
    docx.Document().save(buffer)

    assert error_of(read_docx, buffer.getvalue()).code == "empty_document"


# --- HTML -------------------------------------------------------------------------------

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Help &amp; FAQ</title>
<style>body { color: red }</style><script>var tracking = "script text";</script></head>
<body>
<header><a href="/">Site name</a></header>
<nav><ul><li>Home</li><li>About us</li></ul></nav>
<main>
  <article>
    <header><h1>Password reset</h1></header>
    <p>Use the   <b>portal</b>
       to reset it &lt;within&gt; a day.</p>
    <h2>If the portal fails</h2>
    <ul><li>Call the desk</li><li>Wait an hour</li></ul>
    <table><tr><th>Desk</th><th>Phone</th></tr><tr><td>IT</td><td>123</td></tr></table>
    <pre>reset --user amy
  --force</pre>
    <p># hash at the start</p>
    <div hidden>hidden text</div><span aria-hidden="true">decoration</span>
    <svg><title>icon title</title></svg>
  </article>
</main>
<aside>Related links</aside>
<footer>Copyright footer</footer>
</body></html>
"""


def test_html_keeps_the_main_text_with_headings_and_drops_the_boilerplate() -> None:
    extracted = read_html(PAGE.encode(), "help.html")

    assert extracted.media_type is MediaType.HTML
    assert extracted.title == "Help & FAQ"
    assert extracted.text == (
        "# Password reset\n\n"
        "Use the portal to reset it <within> a day.\n\n"
        "## If the portal fails\n\n"
        "- Call the desk\n\n"
        "- Wait an hour\n\n"
        "| Desk | Phone |\n| IT | 123 |\n\n"
        "```\nreset --user amy\n  --force\n```\n\n"
        "\\# hash at the start\n"
    )


def test_a_page_without_main_keeps_the_body_minus_navigation() -> None:
    page = "<body><nav>Menu</nav><h1>Title</h1><p>Body text.</p><footer>Foot</footer></body>"

    assert read_html(page.encode(), "p.html").text == "# Title\n\nBody text.\n"


def test_html_in_a_declared_legacy_charset_is_decoded() -> None:
    page = '<html><head><meta charset="iso-8859-1"></head><body><p>Caf\xe9 cr\xe8me</p></body>'

    assert read_html(page.encode("latin-1"), "p.html").text == "Café crème\n"


def test_html_that_is_not_utf8_and_declares_no_charset_is_invalid_utf8() -> None:
    assert error_of(read_html, b"<p>Caf\xe9</p>").code == "invalid_utf8"


@pytest.mark.parametrize(
    "page",
    [
        b"",
        b"<html><head><title>Only a title</title></head><body></body></html>",
        b"<script>document.write('x')</script><style>p{}</style><nav>Home</nav>",
    ],
)
def test_html_with_no_text_is_an_empty_document(page: bytes) -> None:
    assert error_of(read_html, page).code == "empty_document"


_WORDS = st.text(alphabet=st.sampled_from("ab #|`~-*<>&\"'\n\t1."), min_size=1, max_size=24).filter(
    lambda text: any(ch.isalnum() for ch in text)
)
_BLOCK = st.tuples(st.sampled_from(["p", "li", "h1", "h2", "h3", "h6"]), _WORDS)


@settings(max_examples=150, deadline=None)
@given(st.lists(_BLOCK, min_size=1, max_size=12))
def test_every_html_heading_and_only_they_become_markdown_headings(
    blocks: list[tuple[str, str]],
) -> None:
    """Body text that looks like Markdown (``# x``, ``|``, fences) never becomes structure,
    and every chunk of the extracted text is an exact slice of it."""
    body = "".join(
        f"<ul><li>{html.escape(text)}</li></ul>"
        if tag == "li"
        else f"<{tag}>{html.escape(text)}</{tag}>"
        for tag, text in blocks
    )
    extracted = read_html(f"<html><body>{body}</body></html>".encode(), "p.html")

    lines = extracted.text.splitlines()
    headings = [(len(m.group(1)), m.group(2) or "") for m in map(_HEADING_LINE.match, lines) if m]
    expected = [(int(tag[1]), " ".join(text.split())) for tag, text in blocks if tag[0] == "h"]
    assert headings == expected
    assert not any(line.lstrip().startswith(("```", "~~~", "|")) for line in lines)
    source = SourceDocument("p.html", MediaType.HTML, extracted.text, DocumentMetadata())
    for chunk in chunk_document(source, target_chars=60, min_chars=0):
        assert chunk.text == extracted.text[chunk.start_char : chunk.end_char]


# --- through the loader -----------------------------------------------------------------


def test_a_sidecar_title_wins_over_the_formats_own_title(tmp_path: Path) -> None:
    (tmp_path / "policy.pdf").write_bytes(pdf_bytes(title="From the PDF"))
    (tmp_path / "policy.pdf.meta.yaml").write_text("title: From the sidecar\nscopes: eng\n")

    [result] = list(load_path(tmp_path / "policy.pdf"))

    assert result.document is not None
    assert result.document.metadata == DocumentMetadata(title="From the sidecar", scopes=("eng",))
    assert result.document.page_starts == read_pdf(pdf_bytes(), "x").page_starts


def test_a_folder_of_formats_loads_them_and_reports_what_it_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(pdf_bytes())
    (tmp_path / "b.docx").write_bytes(docx_bytes())
    (tmp_path / "c.html").write_text(PAGE)
    (tmp_path / "d.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "notes").write_text("no extension")
    (tmp_path / "linked").symlink_to(tmp_path, target_is_directory=True)

    results = list(load_path(tmp_path))

    assert [
        (Path(r.origin).name, r.document.media_type if r.document else r.skipped) for r in results
    ] == [
        ("a.pdf", MediaType.PDF),
        ("b.docx", MediaType.DOCX),
        ("c.html", MediaType.HTML),
        ("d.png", "unsupported file type '.png'"),
        ("linked", "a symbolic link to a folder (not followed)"),
        ("notes", "unsupported file without an extension"),
    ]


def _view(page_starts: tuple[int, ...]) -> ChunkView:
    return ChunkView(
        chunk_id="c",
        document_id="d",
        document_version="v",
        source_uri="file:///d",
        title=None,
        text="",
        start_char=0,
        end_char=0,
        ordinal=0,
        scopes=frozenset({"eng"}),
        dates=DocumentDates(),
        superseded=False,
        superseded_by=None,
        page_starts=page_starts,
    )


_PAGE_TEXT = st.text(alphabet=st.sampled_from("ab. \n"), max_size=400)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PAGE_TEXT, min_size=1, max_size=8), st.integers(20, 300))
def test_paged_text_chunks_slice_it_exactly_and_cross_a_page_only_after_a_small_start(
    pages: list[str], target: int
) -> None:
    """A page starts a chunk unless the chunk before it is still under ``min_chars``."""
    text = "\n\n".join(pages)
    starts = tuple(sum(len(page) + 2 for page in pages[:index]) for index in range(len(pages)))
    source = SourceDocument("p.pdf", MediaType.PDF, text, DocumentMetadata(), page_starts=starts)
    min_chars = target // 4

    chunks = chunk_document(source, target_chars=target, max_chars=target * 2, min_chars=min_chars)

    assert all(chunk.text == text[chunk.start_char : chunk.end_char] for chunk in chunks)
    covered = {i for chunk in chunks for i in range(chunk.start_char, chunk.end_char)}
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())
    for chunk in chunks:
        for start in starts:
            if chunk.start_char < start < chunk.end_char:
                assert len(text[chunk.start_char : start].rstrip()) < min_chars


def test_page_starts_reach_the_document_extra_and_a_callers_value_there_is_replaced() -> None:
    forged = DocumentMetadata(scopes=("eng",), extra={PAGE_STARTS_KEY: "0,1,2", "team": "ops"})
    defaults = IngestDefaults(namespace="n")
    unpaged = SourceDocument("/d/a.md", MediaType.MARKDOWN, "text", forged)
    paged = SourceDocument("/d/a.pdf", MediaType.PDF, "p1\n\np2", forged, page_starts=(0, 4))

    assert build_document(unpaged, Path("/d"), defaults).extra == {"team": "ops"}
    assert build_document(paged, Path("/d"), defaults).extra == {
        "team": "ops",
        PAGE_STARTS_KEY: "0,4",
    }
    assert page_starts_of(json.dumps({PAGE_STARTS_KEY: "0,4"})) == (0, 4)
    assert page_starts_of(json.dumps({PAGE_STARTS_KEY: "4,0"})) == ()
    assert page_starts_of(json.dumps({PAGE_STARTS_KEY: "zero"})) == ()
    assert page_starts_of("{}") == ()
