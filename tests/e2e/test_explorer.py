"""The evidence explorer in a real Chromium against a real service on a socket."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from explorer_support import Explorer, publish_readme_screenshot, screenshot
from playwright.sync_api import BrowserContext, Page, Response

from graphctx.testing.service import ALPHA_SECRET_MARKER, FORBIDDEN_FOR_RITA

pytestmark = pytest.mark.e2e

ROLLBACK = "/ui/search?project=alpha&q=deploy+rollback&mode=auto&max_tokens=2000&timeout_ms=5000"
DEPENDENCIES = "What are the dependencies of payment-service?"


def bundle_via_api(
    explorer: Explorer, principal: str, query: str, scopes: list[str]
) -> list[tuple[str, str]]:
    """The same request through POST /v1/context: what an agent would have received."""
    with httpx.Client(base_url=explorer.url, timeout=60) as client:
        response = client.post(
            "/v1/context",
            headers={"Authorization": f"Bearer {explorer.keys[principal]}"},
            json={
                "query": query,
                "principal_id": principal,
                "allowed_scopes": scopes,
                "namespace": "alpha",
                "max_tokens": 2000,
                "timeout_ms": 5000,
            },
        )
    response.raise_for_status()
    return [(i["citation_id"], i["chunk_id"]) for i in response.json()["items"]]


def shown_items(page: Page, root: str = "") -> list[tuple[str, str]]:
    items = page.locator(f"{root} li.item")
    return [
        (
            items.nth(n).get_attribute("data-citation") or "",
            items.nth(n).get_attribute("data-chunk") or "",
        )
        for n in range(items.count())
    ]


def run_query(page: Page, query: str) -> None:
    page.fill("#query", query)
    with page.expect_navigation():
        page.click("#run-search")


def test_a_search_shows_the_agents_items_in_order_with_citation_ids(
    explorer: Explorer, page: Page
) -> None:
    console_errors: list[str] = []  # a CSP violation is reported here
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    explorer.login(page, "rita", ROLLBACK)
    expected = bundle_via_api(explorer, "rita", "deploy rollback", ["public"])
    assert len(expected) >= 2
    assert shown_items(page) == expected
    assert page.locator("li.item .cite").all_inner_texts() == [c for c, _ in expected]
    assert page.locator("li.item[data-document=alpha-runbook]").count() == 1
    assert page.locator("#copy-link").is_visible()  # the script ran under the CSP
    assert console_errors == []
    screenshot(page, "search-results")


def test_the_url_carries_the_whole_search_state_through_reload_history_and_a_shared_link(
    explorer: Explorer, page: Page, other_context: BrowserContext
) -> None:
    explorer.login(page, "ada")
    page.select_option("#mode", "hybrid")
    page.uncheck("input[name=scope][value=secret]")
    page.fill("#max-tokens", "900")
    run_query(page, "deploy rollback")
    first_url = page.url
    state = parse_qs(urlsplit(first_url).query)
    assert state["q"] == ["deploy rollback"]
    assert state["mode"] == ["hybrid"]
    assert state["scope"] == ["public"]
    assert state["max_tokens"] == ["900"]
    first_items = shown_items(page)
    assert first_items

    page.reload()
    assert shown_items(page) == first_items
    assert page.input_value("#query") == "deploy rollback"
    assert page.input_value("#mode") == "hybrid"
    assert not page.is_checked("input[name=scope][value=secret]")

    run_query(page, DEPENDENCIES)
    second_items = shown_items(page)
    assert second_items != first_items
    page.go_back()
    assert page.url == first_url
    assert shown_items(page) == first_items
    assert page.input_value("#query") == "deploy rollback"
    page.go_forward()
    assert shown_items(page) == second_items
    assert page.input_value("#query") == DEPENDENCIES

    fresh = other_context.new_page()
    fresh.goto(first_url)  # an anonymous browser: the login keeps the link's state
    fresh.fill("#api-key", explorer.keys["ada"])
    fresh.click("button[type=submit]")
    fresh.wait_for_url(first_url)
    assert shown_items(fresh) == first_items
    assert fresh.input_value("#max-tokens") == "900"


def test_a_superseded_document_carries_the_stale_badge(explorer: Explorer, page: Page) -> None:
    explorer.login(page, "rita", ROLLBACK)
    old = page.locator("li.item[data-document=alpha-rollback-2024]")
    assert old.count() == 1
    assert old.locator(".badge").inner_text() == "stale"
    current = page.locator("li.item[data-document=alpha-runbook] .badge").inner_text()
    assert current != "stale"
    link = old.locator("a[href='https://wiki.example.com/runbooks/rollback-2024']")
    assert link.get_attribute("rel") == "noopener noreferrer"


def test_a_restricted_document_never_reaches_a_principal_without_its_scope(
    explorer: Explorer, context: BrowserContext, other_context: BrowserContext
) -> None:
    bodies: list[str] = []

    def record(response: Response) -> None:
        if not 300 <= response.status < 400:  # a redirect has no body to read
            bodies.append(response.text())

    context.on("response", record)
    page = context.new_page()
    query = "/ui/search?project=alpha&q=payroll+escalation+manual+run+code+rollback"
    explorer.login(page, "rita", query)
    page.locator("details.span summary").first.click()
    assert page.locator("li.item").count() >= 1
    assert len(bodies) >= 4  # login form, search page, stylesheet, script
    for marker in FORBIDDEN_FOR_RITA:
        assert not [b for b in bodies if marker in b], marker

    # The same search as ada, who holds "secret": the marker is there, so the check can fail.
    ada = other_context.new_page()
    explorer.login(ada, "ada", query)
    assert ALPHA_SECRET_MARKER in ada.content()


def test_signing_in_needs_a_valid_key_and_no_key_ever_travels_in_a_url(
    explorer: Explorer, context: BrowserContext
) -> None:
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))
    page = context.new_page()
    page.goto(explorer.url + "/ui/search?project=alpha&q=deploy")
    assert "/ui/login" in page.url
    wrong = explorer.keys["rita"][:-4] + "abcd"
    page.fill("#api-key", wrong)
    with page.expect_response("**/ui/login") as answer:
        page.click("button[type=submit]")
    assert answer.value.status == 401
    assert page.locator("[role=alert]").inner_text() == "That API key was not accepted."
    assert wrong not in page.content()
    assert page.input_value("#api-key") == ""

    page.fill("#api-key", explorer.keys["rita"])
    page.click("button[type=submit]")
    page.wait_for_url("**/ui/search?project=alpha&q=deploy")
    assert page.locator("li.item").count() >= 1
    cookies = {c["name"]: c for c in context.cookies()}
    session = cookies["graphctx_session"]
    assert session["httpOnly"]
    assert session["sameSite"] == "Strict"
    assert session["path"] == "/ui"

    page.click("header button[type=submit]")  # sign out
    page.wait_for_url("**/ui/login")
    page.goto(explorer.url + "/ui/search")
    assert "/ui/login" in page.url
    assert urls
    for url in urls:
        for key in (*explorer.keys.values(), wrong):
            assert key not in url


def test_compare_marks_what_only_one_principal_may_see(explorer: Explorer, page: Page) -> None:
    explorer.login(page, "ada", "/ui/compare?project=alpha&q=payroll+escalation+rollback&as=rita")
    left = page.locator("section.column-left")
    right = page.locator("section.column-right")
    assert left.get_attribute("data-principal") == "ada"
    assert right.get_attribute("data-principal") == "rita"
    secret = left.locator("li.item[data-document=alpha-payroll]")
    assert secret.count() == 1
    assert secret.locator(".mark-diff").inner_text() == "only for ada"
    assert right.locator("li.item[data-document=alpha-payroll]").count() == 0
    assert right.locator(".mark-diff").count() == 0
    assert right.locator("li.item").count() >= 1
    screenshot(page, "compare")


def test_compare_is_refused_to_a_key_that_may_not_impersonate(
    explorer: Explorer, page: Page
) -> None:
    explorer.login(page, "rita", "/ui/compare?project=alpha&q=payroll&as=ada")
    assert page.locator("h1").inner_text() == "Not allowed"
    assert page.locator("li.item").count() == 0
    assert page.locator("#run-compare").count() == 0


def test_a_search_runs_and_expands_a_span_with_the_keyboard_only(
    explorer: Explorer, page: Page
) -> None:
    explorer.login(page, "rita")
    page.keyboard.press("Escape")
    for _ in range(20):  # Tab through the page until the query box has focus
        if page.evaluate("document.activeElement && document.activeElement.id") == "query":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "query"
    page.keyboard.type("deploy rollback")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("li.item").count() >= 1
    for _ in range(60):
        if page.evaluate("document.activeElement.tagName") == "SUMMARY":
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    opened = page.locator("details.span[open]")
    assert opened.count() == 1
    highlighted = opened.locator("mark").inner_text()
    item = opened.locator("xpath=ancestor::li[1]")
    assert highlighted.strip() == item.locator("blockquote.content").inner_text().strip()
    screenshot(page, "expanded-span")


def test_a_graph_expanded_item_draws_its_provenance_path(explorer: Explorer, page: Page) -> None:
    explorer.login(page, "rita", "/ui/search?project=alpha&q=" + DEPENDENCIES.replace(" ", "+"))
    graph = page.locator("li.item[data-document=svc-postgres] svg.path-graph")
    assert graph.count() == 1
    label = graph.get_attribute("aria-label") or ""
    assert "Entity svc:payment -DEPENDS_ON-> Entity svc:postgres" in label
    assert "DEPENDS_ON" in graph.locator("text.edge-label").all_text_contents()
    assert "graph" in page.locator("section.route").inner_text()
    screenshot(page, "graph-path")
    publish_readme_screenshot(page)


def test_the_explorer_fits_a_narrow_screen(
    explorer: Explorer, other_context: BrowserContext
) -> None:
    page = other_context.new_page()
    page.set_viewport_size({"width": 360, "height": 800})
    explorer.login(page, "ada", "/ui/compare?project=alpha&q=payroll+escalation+rollback&as=rita")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    screenshot(page, "narrow")
