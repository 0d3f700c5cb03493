"""The explorer renders whatever writers stored as inert text, over a real socket.

Writers choose a document's text, title and ``source_uri`` (``javascript:`` is accepted at
ingest), and a reader's browser renders them. ``server/ui/html.py:tag`` escapes every string and
``server/ui/results.py`` links only ``http(s)://`` sources; this drives both through the real
service and checks the served HTML, including that the hostile values *were* rendered (escaped),
so the test cannot pass by showing nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from test_ui_login import sign_in

from graphctx.server.models import IngestResult
from graphctx.testing.service import Harness

WORD = "quillwort"  # unique to these documents, so the search shows all of them
HOSTILE_DOCUMENTS = [
    {
        "document_id": "hostile-text",
        "text": f'{WORD} <script>alert("xss-text")</script> "><img src=x onerror=alert(1)>',
        "title": "</title><script>alert('xss-title')</script>",
        "source_uri": "javascript:alert('xss-uri')",
    },
    {
        "document_id": "hostile-data-uri",
        "text": f"{WORD} the data uri document",
        "title": '" onmouseover="alert(2)" x="',
        "source_uri": "data:text/html,<script>alert('xss-data')</script>",
    },
    {
        "document_id": "hostile-mixed-case",
        "text": f"{WORD} the mixed case scheme document",
        "title": "' onfocus='alert(3)' autofocus='",
        "source_uri": "JaVaScRiPt:alert('xss-case')",
    },
    {
        "document_id": "hostile-quoted-link",
        "text": f"{WORD} the quoted link document",
        "title": "Quoted link",
        "source_uri": 'https://example.com/" onclick="alert(4)" x="',
    },
]
ESCAPED_TRACES = (
    "&lt;script&gt;alert(&quot;xss-text&quot;)&lt;/script&gt;",
    "&lt;/title&gt;&lt;script&gt;alert(&#x27;xss-title&#x27;)&lt;/script&gt;",
    "javascript:alert(&#x27;xss-uri&#x27;)",
    "data:text/html,&lt;script&gt;",
    "&quot; onmouseover=&quot;alert(2)&quot;",
    'href="https://example.com/&quot; onclick=&quot;alert(4)&quot; x=&quot;"',
)
"""Each hostile value as it must appear: present, and escaped."""
LIVE_MARKUP = (
    "<script>",
    "<img",
    'onmouseover="',
    "onfocus='",
    'onclick="',
    'href="javascript:',
    'href="data:',
    "</title><script",
)


@pytest.fixture
def hostile_documents(harness: Harness) -> Iterator[None]:
    """Written by ``wes`` into ``alpha`` under ``drafts``: other tests' readers never see them."""
    documents = [{**document, "scopes": ["drafts"]} for document in HOSTILE_DOCUMENTS]
    with harness.client("wes") as wes:
        written = wes.post("/v1/projects/alpha/documents", json={"documents": documents})
        assert written.status_code == 200, written.text
        assert IngestResult.model_validate_json(written.text).errors == []
        try:
            yield
        finally:
            for document in HOSTILE_DOCUMENTS:
                wes.delete(f"/v1/projects/alpha/documents/{document['document_id']}")


def test_hostile_text_titles_and_sources_render_as_inert_escaped_text(
    harness: Harness, hostile_documents: None
) -> None:
    with httpx.Client(base_url=harness.url, timeout=60, follow_redirects=False) as browser:
        assert sign_in(browser, harness.keys["wes"]).status_code == 303
        page = browser.get("/ui/search", params={"project": "alpha", "q": WORD, "scopes": "drafts"})
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    shown = {
        d["document_id"]
        for d in HOSTILE_DOCUMENTS
        if f'data-document="{d["document_id"]}"' in page.text
    }
    assert shown == {d["document_id"] for d in HOSTILE_DOCUMENTS}
    missing_traces = [trace for trace in ESCAPED_TRACES if trace not in page.text]
    assert missing_traces == []
    live = [markup for markup in LIVE_MARKUP if markup in page.text.lower()]
    assert live == []
    own_scripts = page.text.lower().count("<script")
    assert own_scripts == page.text.lower().count('<script src="/ui/static/')
