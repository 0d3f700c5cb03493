"""``/docs`` in a real Chromium with the network cut off: Swagger UI loads from the service alone
and shows every operation of the OpenAPI 3.1 document (issue 15: it was blank offline)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from explorer_support import Explorer

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

pytestmark = pytest.mark.e2e


def test_the_api_docs_render_every_operation_without_any_other_host(
    explorer: Explorer, page: Page
) -> None:
    elsewhere: list[str] = []

    def only_the_service(route: Route) -> None:
        if route.request.url.startswith(explorer.url + "/"):
            route.continue_()
        else:  # what a machine without network would get
            elsewhere.append(route.request.url)
            route.abort()

    document = page.request.get(explorer.url + "/openapi.json").json()
    operations = [op for path in document["paths"].values() for op in path.values()]
    declared_tags = sorted({tag for op in operations for tag in op["tags"]})
    page.route("**/*", only_the_service)
    page.goto(explorer.url + "/docs")
    page.wait_for_selector(".opblock")
    assert page.locator(".opblock").count() == len(operations) >= 10
    tags = [text.split()[0] for text in page.locator(".opblock-tag").all_inner_texts()]
    assert sorted(tags) == declared_tags
    assert {"context", "search", "documents", "service", "identity"} <= set(tags)
    assert page.locator(".errors-wrapper").count() == 0
    assert elsewhere == []
