"""The PDF, DOCX and HTML readers on mutated files: a document or a typed error, nothing else.

Uploads reach these readers (``server/http/uploads.py`` loads every file with ``load_path``),
so a hostile file must end as an ``InvalidDocumentError`` with a code, never as another
exception or a hang.
"""

from __future__ import annotations

import io

import docx
import fuzz_targets
from bounded import BoundedWorker
from fpdf import FPDF
from hypothesis import given
from hypothesis import strategies as st
from mutation import mutate, mutations
from profiles import fuzz_settings
from test_fuzz_loaders import assert_typed


def _pdf() -> bytes:
    pdf = FPDF()
    pdf.set_compression(False)  # mutations then reach the text operators, not only zlib
    pdf.set_font("Helvetica", size=12)
    for text in ("Page one holds the refund rule.", "Page two holds the shipping rule."):
        pdf.add_page()
        pdf.multi_cell(0, 10, text)
    return bytes(pdf.output())


def _docx() -> bytes:
    document = docx.Document()
    document.add_heading("Handbook", level=1)
    document.add_paragraph("Badges are personal.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "a"
    table.cell(0, 1).text = "b"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


SEEDS = {
    "doc.pdf": _pdf(),
    "doc.docx": _docx(),
    "page.html": (
        b"<html><head><meta charset=utf-8><title>T</title><script>x()</script></head><body>"
        b"<nav>n</nav><main><h1>H</h1><p>Text &amp; more</p><table><tr><td>a<td>b</tr>"
        b"</table><pre>code</pre><ul><li>item</ul></main></body></html>"
    ),
}


def test_unmutated_format_seeds_all_load() -> None:
    summaries = assert_typed(fuzz_targets.load_files(SEEDS))
    assert [s.error_code for s in summaries if s.text is None] == []


@fuzz_settings()
@given(name=st.sampled_from(sorted(SEEDS)), steps=mutations())
def test_mutated_pdf_docx_and_html_load_as_documents_or_typed_errors(
    worker: BoundedWorker, name: str, steps: list[tuple[str, float, int]]
) -> None:
    assert_typed(worker.call(fuzz_targets.load_files, {name: mutate(SEEDS[name], steps)}))
