"""PDF, DOCX and HTML through ingest into a real store and back out through a bundle.

The files are written here (fpdf2, python-docx, an HTML string). Every chunk the store keeps
and every item a bundle returns must slice the stored document text exactly, and the stored
text must be what the format reader extracted; PDF items carry the page their span lies on.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pytest
from fpdf import FPDF

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, ContextResponse, PageRange
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.ingest.formats.docx import read_docx
from graphctx.ingest.formats.html import read_html
from graphctx.ingest.formats.pdf import read_pdf
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.port import GraphStore
from graphctx.store.sqlite.store import SqliteGraphStore

TIMEOUT_MS = 30_000  # the cores are shared
# One topic per PDF page, each long enough that the chunker cuts at the page boundary.
PAGE_TOPICS = (
    "Refunds: customers may return unworn shoes within thirty days for a full refund.",
    "Shipping: parcels above fifty euros ship free and leave the warehouse in two days.",
    "Warranty: soles that split in the first year are replaced by the manufacturer.",
)
FILLER = " Staff follow this rule at every store and note each case in the ledger."
QUESTIONS = {
    "policy.pdf": ("which parcels ship free from the warehouse", 2),
    "handbook.docx": ("when do new staff get a laptop", None),
    "faq.html": ("how do I reset my password on the portal", None),
}
HTML_PAGE = """<!doctype html><html><head><title>FAQ</title>
<script>var analytics = "do not index";</script><style>p { margin: 0 }</style></head>
<body><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<main><h1>Password help</h1><p>Reset your password on the portal; the link lasts a day.</p>
<h2>Locked out</h2><p>Call the service desk after three failed attempts.</p></main>
<footer>Copyright 2026</footer></body></html>"""


def write_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for topic in PAGE_TOPICS:
        pdf.add_page()
        pdf.multi_cell(0, 6, topic + FILLER * 12)
    pdf.output(str(folder / "policy.pdf"))
    document = docx.Document()
    document.add_heading("Staff handbook", level=1)
    document.add_paragraph("New staff get a laptop on their first day from the IT desk.")
    document.add_heading("Badges", level=2)
    document.add_paragraph("Badges are personal and must never be lent to anyone.")
    buffer = io.BytesIO()
    document.save(buffer)
    (folder / "handbook.docx").write_bytes(buffer.getvalue())
    (folder / "faq.html").write_text(HTML_PAGE, "utf-8")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    return folder


def extracted_text(path: Path) -> str:
    read = {".pdf": read_pdf, ".docx": read_docx, ".html": read_html}[path.suffix]
    return read(path.read_bytes(), str(path)).text


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    if request.param == "sqlite":
        yield SqliteGraphStore(tmp_path / "store.sqlite")
        return
    server: Any = request.getfixturevalue("neo4j_server")
    yield Neo4jGraphStore(server.uri, server.auth, server.database)


def stored_texts(
    store: GraphStore, namespace: str, request: pytest.FixtureRequest
) -> dict[str, str]:
    """The latest text of every document, read from the store itself, by document id."""
    if isinstance(store, SqliteGraphStore):
        with sqlite3.connect(store.path) as conn:
            rows = conn.execute(
                "SELECT document_id, text FROM documents WHERE namespace = ? AND is_latest = 1",
                (namespace,),
            ).fetchall()
        return dict(rows)
    import neo4j

    server: Any = request.getfixturevalue("neo4j_server")
    with neo4j.GraphDatabase.driver(server.uri, auth=server.auth) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (d:Document {namespace: $ns, is_latest: true}) RETURN d.document_id, d.text",
            ns=namespace,
            database_=server.database,
        )
    return {record[0]: record[1] for record in records}


def ask(namespace: str, query: str) -> ContextRequest:
    return ContextRequest(
        query=query,
        principal_id="sam",
        allowed_scopes=["eng"],
        namespace=namespace,
        timeout_ms=TIMEOUT_MS,
    )


def test_every_chunk_and_item_slices_the_stored_text_and_pdf_items_name_their_page(
    store: GraphStore,
    embedder: UniversalSentenceEncoderEmbedder,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    folder = write_folder(tmp_path / "docs")
    namespace = "fmt" + uuid.uuid4().hex[:10]
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    with provider.open():
        report = provider.ingest_path(folder, namespace=namespace, scopes=["eng"])
        views = {name: provider._run(store.document_chunks(namespace, name)) for name in QUESTIONS}
        bundles = {name: provider.retrieve(ask(namespace, q)) for name, (q, _) in QUESTIONS.items()}

    assert report.errors == []
    assert sorted(d.document_id for d in report.documents) == sorted(QUESTIONS)
    assert [(Path(s.origin).name, s.reason) for s in report.skipped] == [
        ("logo.png", "unsupported file type '.png'")
    ]
    stored = stored_texts(store, namespace, request)
    for name in QUESTIONS:
        assert stored[name] == extracted_text(folder / name)
        assert views[name], name
        for view in views[name]:
            assert view.text == stored[name][view.start_char : view.end_char]
    pdf_views = views["policy.pdf"]
    assert [view.pages(view.start_char, view.end_char) for view in pdf_views] == [
        (1, 1),
        (2, 2),
        (3, 3),
    ]
    for name, (_, page) in QUESTIONS.items():
        bundle = bundles[name]
        assert bundle.answerable, (name, bundle.reason)
        assert bundle.items[0].document_id == name
        for item in bundle.items:
            assert (
                item.content == stored[item.document_id][item.span.start_char : item.span.end_char]
            )
            dumped = json.loads(item.model_dump_json())
            if item.document_id == "policy.pdf":
                assert item.pages is not None
                assert dumped["pages"] == item.pages.model_dump()
            else:
                assert item.pages is None
                assert "pages" not in dumped
        if page is not None:
            assert bundle.items[0].pages == PageRange(first=page, last=page)


# --- the CLI, as users run it --------------------------------------------------------------


def graphctx(*args: str | Path, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``graphctx`` in a fresh interpreter; ``prelude`` runs first (to block an import)."""
    code = (
        f"{prelude}\nimport sys\nfrom graphctx.cli.main import main\nsys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


BLOCK_EXTRAS = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    class Blocked(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("pypdf", "docx"):
                raise ImportError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, Blocked())
    """
)
ELAPSED = re.compile(r"\d+\.\d s$")


def test_cli_ingests_pdf_docx_and_html_and_lists_the_skipped_png(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs")
    store = tmp_path / "cli.sqlite"

    done = graphctx("--store", store, "ingest", folder, "--namespace", "docs", "--scope", "eng")
    search = graphctx(
        "--store", store, "search", "which parcels ship free", "--namespace", "docs",
        "--principal", "sam", "--scope", "eng", "--timeout-ms", str(TIMEOUT_MS), "--json",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert ELAPSED.sub("<t>", lines[0]) == (
        "namespace docs: 3 documents (3 added), 5 chunks written, 0 errors, 1 skipped, <t>"
    )
    assert lines[1:] == [f"  skipped: {folder / 'logo.png'}: unsupported file type '.png'"]
    assert search.returncode == 0, search.stderr
    bundle = ContextResponse.model_validate_json(search.stdout)
    assert bundle.items[0].document_id == "policy.pdf"
    assert bundle.items[0].pages == PageRange(first=2, last=2)


def test_a_missing_extra_is_reported_per_file_naming_the_pip_install(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs")
    store = tmp_path / "blocked.sqlite"

    done = graphctx(
        "--store", store, "ingest", folder, "--namespace", "docs", "--scope", "eng", "--json",
        prelude=BLOCK_EXTRAS,
    )  # fmt: skip

    assert done.returncode == 2, done.stderr  # rejected files are bad input (issue 15)
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert [d["document_id"] for d in report["documents"]] == ["faq.html"]
    assert [(Path(e["origin"]).name, e["code"]) for e in report["errors"]] == [
        ("handbook.docx", "format_extra_missing"),
        ("policy.pdf", "format_extra_missing"),
    ]
    messages = {Path(e["origin"]).name: e["message"] for e in report["errors"]}
    assert "pip install 'graphctx[pdf]'" in messages["policy.pdf"]
    assert "pip install 'graphctx[docx]'" in messages["handbook.docx"]
    assert [Path(s["origin"]).name for s in report["skipped"]] == ["logo.png"]


def test_encrypted_corrupt_and_textless_files_are_typed_errors_and_nothing_of_them_is_written(
    provider: ContextProvider, tmp_path: Path
) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    locked = FPDF()
    locked.set_font("Helvetica", size=12)
    locked.add_page()
    locked.multi_cell(0, 10, "The locked salary table.")
    locked.set_encryption(owner_password="owner", user_password="secret")
    locked.output(str(folder / "locked.pdf"))
    scan = FPDF()
    scan.add_page()
    scan.rect(10, 10, 80, 80)
    scan.output(str(folder / "scan.pdf"))
    (folder / "cut.pdf").write_bytes(scan.output()[:300])  # a download cut short
    (folder / "renamed.docx").write_bytes(b"%PDF-1.7 this is no zip archive")
    (folder / "chrome.html").write_text("<nav>Home</nav><script>track()</script>", "utf-8")
    (folder / "good.html").write_text("<main><h1>Kept</h1><p>The one good page.</p></main>")

    report = provider.ingest_path(folder, namespace="bad", scopes=["eng"])
    listed = provider.list_documents("bad", ["eng"])

    assert sorted((Path(e.origin).name, e.code) for e in report.errors) == [
        ("chrome.html", "empty_document"),
        ("cut.pdf", "pdf_invalid"),
        ("locked.pdf", "pdf_encrypted"),
        ("renamed.docx", "docx_invalid"),
        ("scan.pdf", "pdf_no_text"),
    ]
    assert [d.document_id for d in listed] == ["good.html"]


def test_a_corrupt_pdf_is_one_typed_error_line_and_no_parser_chatter(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "noise.pdf").write_bytes(b"\x19\xc6 not a pdf at all " * 64)

    done = graphctx("--store", tmp_path / "s.sqlite", "ingest", folder, "--scope", "eng")

    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()  # pypdf's own "invalid pdf header" lines are not shown
    assert line.startswith(f"graphctx: error [pdf_invalid]: {folder / 'noise.pdf'}: not a readable")
