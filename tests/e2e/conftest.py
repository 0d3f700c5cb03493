"""A real service on a loopback socket and Debian's Chromium driven by Playwright.

The corpus is :mod:`graphctx.testing.service`'s two projects (alpha: public runbook and a
``secret`` payroll note; beta: a runbook) plus, in alpha, a superseded runbook and a small
declared service graph, so the explorer has stale and graph-expanded items to show. Playwright
never downloads a browser: it launches ``/usr/bin/chromium``; without it the tests skip
locally and fail under ``CI=true``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from explorer_support import Explorer

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.server.keys import generate_key
from graphctx.testing.requirements import missing_requirement
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import service_settings, unopened_provider, write_corpus

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 30_000

EXTRA_ALPHA = {
    "rollback-2024.md": """---
document_id: alpha-rollback-2024
title: Deploy rollback (2024, replaced)
scopes: [public]
source_uri: https://wiki.example.com/runbooks/rollback-2024
source_version: "1"
superseded_by: alpha-runbook
---
# Deploy rollback, old procedure

The 2024 rollback procedure for a deploy: stop the release train, redeploy the tag by hand
and ask the release manager before any rollback job runs.
""",
    "svc-payment.md": """---
document_id: svc-payment
title: payment-service
scopes: [public]
updated_at: 2026-06-01
---
payment-service takes card payments and keeps a ledger.
""",
    "svc-postgres.md": """---
document_id: svc-postgres
title: postgres-main
scopes: [public]
updated_at: 2026-06-01
---
postgres-main is the primary relational database cluster.
""",
}
SERVICE_GRAPH = """
nodes:
  - {id: svc:payment, type: Service, name: payment-service, support: [svc-payment]}
  - {id: svc:postgres, type: System, name: postgres-main, support: [svc-postgres]}
relations:
  - source: svc:payment
    type: DEPENDS_ON
    target: svc:postgres
    support: [{document: svc-payment, quote: keeps a ledger}]
"""


@pytest.fixture(scope="session")
def explorer_store(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Path:
    root = write_corpus(tmp_path_factory.mktemp("explorer-corpus"))
    extra = root / "alpha-extra"
    extra.mkdir()
    for name, text in EXTRA_ALPHA.items():
        (extra / name).write_text(text, encoding="utf-8")
    (root / "services.yaml").write_text(SERVICE_GRAPH, encoding="utf-8")
    store = root / "store.sqlite"
    with unopened_provider(store, embedder).open() as provider:
        for folder, project in (("alpha", "alpha"), ("alpha-extra", "alpha"), ("beta", "beta")):
            report = provider.ingest_path(
                root / folder,
                namespace=project,
                source_uri_prefix=f"https://docs.example.com/{project}/",
            )
            assert not report.errors, report.errors
        provider.ingest_graph(root / "services.yaml", namespace="alpha")
    return store


@pytest.fixture(scope="session")
def explorer(
    explorer_store: Path, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[Explorer]:
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    app = create_app(service_settings(keys), unopened_provider(explorer_store, embedder))
    with serve_in_thread(app) as url:
        yield Explorer(url=url, keys=keys)


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread
# while it is open, which would break every later test that calls asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        missing_requirement(f"{CHROMIUM} is not installed (the CI test command installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield launched
        launched.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser profile: no cookies, no history."""
    yield from _fresh_context(browser)


@pytest.fixture
def other_context(browser: Browser) -> Iterator[BrowserContext]:
    """A second, unrelated profile (someone opening a shared link, another principal)."""
    yield from _fresh_context(browser)


def _fresh_context(browser: Browser) -> Iterator[BrowserContext]:
    opened = browser.new_context(viewport={"width": 1280, "height": 900})
    opened.set_default_timeout(WAIT_MS)
    yield opened
    opened.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()
