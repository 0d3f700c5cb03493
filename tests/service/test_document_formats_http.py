"""Uploading PDF, DOCX and HTML files to the service; PDF results name their page."""

from __future__ import annotations

import io
import json

import docx
from fpdf import FPDF

from graphctx.contract import PageRange
from graphctx.server.models import IngestResult, SearchResponse
from graphctx.testing.service import Harness

FILLER = " The axolotl keepers log every tank check in the shared ledger."
PAGES = (
    "Axolotl feeding: the axolotls eat bloodworms twice a week.",
    "Axolotl tanks: the water of an axolotl tank stays below eighteen degrees.",
)


def pdf_bytes() -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in PAGES:
        pdf.add_page()
        pdf.multi_cell(0, 6, page + FILLER * 14)
    return bytes(pdf.output())


def docx_bytes() -> bytes:
    document = docx.Document()
    document.add_heading("Axolotl handover", level=1)
    document.add_paragraph("The night shift hands the axolotl room keys to the day shift.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_uploaded_pdf_docx_and_html_are_read_and_pdf_results_carry_their_page(
    harness: Harness,
) -> None:
    files = [
        ("files", ("care/axolotl.pdf", pdf_bytes(), "application/pdf")),
        ("files", ("care/handover.docx", docx_bytes(), "application/octet-stream")),
        (
            "files",
            (
                "care/faq.html",
                b"<nav>Menu</nav><main><h1>Axolotl FAQ</h1><p>Axolotls regrow limbs.</p></main>",
                "text/html",
            ),
        ),
        ("files", ("care/photo.png", b"\x89PNG\r\n\x1a\n", "image/png")),
    ]
    with harness.client("wes") as http:
        uploaded = http.post("/v1/projects/gamma/documents", files=files, data={"scopes": "public"})
        searched = http.post(
            "/v1/projects/gamma/search",
            json={"query": "how cold is the water of an axolotl tank", "limit": 5},
        )
        for name in ("axolotl.pdf", "handover.docx", "faq.html"):
            http.delete(f"/v1/projects/gamma/documents/care/{name}")

    assert uploaded.status_code == 200, uploaded.text
    report = IngestResult.model_validate_json(uploaded.text)
    assert sorted(d.document_id for d in report.documents) == [
        "care/axolotl.pdf",
        "care/faq.html",
        "care/handover.docx",
    ]
    assert [(e.origin, e.code) for e in report.errors] == [("care/photo.png", "unsupported_type")]
    assert searched.status_code == 200, searched.text
    found = SearchResponse.model_validate_json(searched.text)
    raw = json.loads(searched.text)["results"]
    assert found.results[0].document_id == "care/axolotl.pdf"
    assert found.results[0].pages == PageRange(first=2, last=2)
    for result, dumped in zip(found.results, raw, strict=True):
        assert ("pages" in dumped) == (result.document_id == "care/axolotl.pdf")
