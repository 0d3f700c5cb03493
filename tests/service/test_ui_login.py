"""Explorer login, logout and CSRF over a real socket, with plain HTTP (no browser)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from graphctx.testing.service import ALPHA_SECRET_MARKER, Harness

LOGIN_TOKEN = re.compile(r'name="login_token" value="([^"]+)"')
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def browser(harness: Harness) -> Iterator[httpx.Client]:
    """A cookie-keeping client that does not follow redirects, like a browser we can inspect."""
    with httpx.Client(base_url=harness.url, timeout=60, follow_redirects=False) as client:
        yield client


def login_form(client: httpx.Client, next_url: str = "/ui/search") -> str:
    response = client.get("/ui/login", params={"next": next_url})
    assert response.status_code == 200
    match = LOGIN_TOKEN.search(response.text)
    assert match is not None
    return match.group(1)


def sign_in(
    client: httpx.Client, key: str, next_url: str = "/ui/search", token: str | None = None
) -> httpx.Response:
    token = login_form(client, next_url) if token is None else token
    return client.post("/ui/login", data={"api_key": key, "next": next_url, "login_token": token})


def test_an_anonymous_visit_is_sent_to_the_login_form_with_its_search_kept(
    browser: httpx.Client,
) -> None:
    response = browser.get("/ui/search", params={"project": "alpha", "q": "rollback"})
    assert response.status_code == 303
    location = urlsplit(response.headers["location"])
    assert location.path == "/ui/login"
    assert parse_qs(location.query)["next"] == ["/ui/search?project=alpha&q=rollback"]


def test_a_valid_key_opens_a_strict_http_only_session_scoped_to_the_explorer(
    browser: httpx.Client, harness: Harness
) -> None:
    response = sign_in(browser, harness.keys["rita"], "/ui/search?project=alpha&q=rollback")
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/search?project=alpha&q=rollback"
    cookie = next(c for c in response.headers.get_list("set-cookie") if "graphctx_session=" in c)
    attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/ui"} <= attributes
    assert "secure" not in attributes  # plain http to loopback: local use
    page = browser.get("/ui/search", params={"project": "alpha", "q": "rollback"})
    assert page.status_code == 200
    assert 'data-citation="S1"' in page.text
    assert harness.keys["rita"] not in page.text


def test_a_wrong_key_is_refused_without_being_echoed(
    browser: httpx.Client, harness: Harness
) -> None:
    wrong = harness.keys["rita"][:-6] + "zzzzzz"
    response = sign_in(browser, wrong)
    assert response.status_code == 401
    assert "That API key was not accepted." in response.text
    assert wrong not in response.text
    assert "graphctx_session" not in response.headers.get("set-cookie", "")
    assert browser.get("/ui/search").status_code == 303


def test_a_login_post_without_the_forms_token_is_refused(
    browser: httpx.Client, harness: Harness
) -> None:
    login_form(browser)
    response = sign_in(browser, harness.keys["rita"], token="forged-token")
    assert response.status_code == 400
    assert "graphctx_session" not in response.headers.get("set-cookie", "")


@pytest.mark.parametrize(
    "next_url",
    [
        "https://evil.example/ui/search",
        "//evil.example/ui/",
        "/\\evil.example",
        "/v1/context",
        "/ui/logout",
        "javascript:alert(1)",
    ],
)
def test_after_login_the_browser_only_ever_goes_to_an_explorer_page(
    browser: httpx.Client, harness: Harness, next_url: str
) -> None:
    response = sign_in(browser, harness.keys["rita"], next_url)
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/search"


def test_logout_needs_the_sessions_csrf_token_and_then_ends_the_session(
    browser: httpx.Client, harness: Harness
) -> None:
    sign_in(browser, harness.keys["rita"])
    page = browser.get("/ui/search")
    match = CSRF.search(page.text)
    assert match is not None

    refused = browser.post("/ui/logout", data={"csrf": "not-the-token"})
    assert refused.status_code == 403
    assert browser.get("/ui/search").status_code == 200  # still signed in

    done = browser.post("/ui/logout", data={"csrf": match.group(1)})
    assert done.status_code == 303
    assert done.headers["location"] == "/ui/login"
    assert browser.get("/ui/search").status_code == 303


def test_a_stolen_cookie_is_useless_after_logout(browser: httpx.Client, harness: Harness) -> None:
    sign_in(browser, harness.keys["ada"])
    stolen = browser.cookies.get("graphctx_session")
    csrf = CSRF.search(browser.get("/ui/search").text)
    assert stolen is not None
    assert csrf is not None
    browser.post("/ui/logout", data={"csrf": csrf.group(1)})
    with httpx.Client(base_url=harness.url, cookies={"graphctx_session": stolen}) as thief:
        response = thief.get("/ui/search", params={"project": "alpha", "q": "payroll"})
    assert response.status_code == 303
    assert ALPHA_SECRET_MARKER not in response.text


def test_the_session_cookie_does_not_open_the_api_and_a_key_header_does_not_open_the_ui(
    browser: httpx.Client, harness: Harness
) -> None:
    sign_in(browser, harness.keys["ada"])
    api = browser.post(
        "/v1/context",
        json={
            "query": "payroll",
            "principal_id": "ada",
            "allowed_scopes": ["secret"],
            "namespace": "alpha",
        },
    )
    assert api.status_code == 401
    with httpx.Client(base_url=harness.url, follow_redirects=False) as client:
        ui = client.get(
            "/ui/search",
            params={"project": "alpha", "q": "payroll"},
            headers={"Authorization": f"Bearer {harness.keys['ada']}"},
        )
    assert ui.status_code == 303
    assert ALPHA_SECRET_MARKER not in ui.text


def test_every_explorer_response_forbids_framing_sniffing_referrers_and_foreign_content(
    browser: httpx.Client, harness: Harness
) -> None:
    sign_in(browser, harness.keys["rita"])
    for path in ("/ui/login", "/ui/search", "/ui/static/explorer.css", "/ui"):
        response = browser.get(path)
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp
        assert "script-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-content-type-options"] == "nosniff"
    page = browser.get("/ui/search", params={"project": "alpha", "q": "rollback"})
    assert not re.search(r"""(src|href)="(https?:)?//""", page.text.split("<main")[0])
    assert "<script>" not in page.text
    assert " style=" not in page.text


def test_a_project_outside_the_grant_looks_like_one_that_does_not_exist(
    browser: httpx.Client, harness: Harness
) -> None:
    sign_in(browser, harness.keys["rita"])
    beta = browser.get("/ui/search", params={"project": "beta", "q": "rollback"})
    nowhere = browser.get("/ui/search", params={"project": "nowhere", "q": "rollback"})
    assert beta.status_code == nowhere.status_code == 200
    assert "no such project" in beta.text
    assert harness.markers["beta"] not in beta.text
    assert '<option value="beta"' not in beta.text
    assert beta.text.count("no such project") == nowhere.text.count("no such project")


def test_signing_in_again_replaces_the_previous_session(
    browser: httpx.Client, harness: Harness
) -> None:
    sign_in(browser, harness.keys["rita"])
    first = browser.cookies.get("graphctx_session")
    sign_in(browser, harness.keys["rita"])
    second = browser.cookies.get("graphctx_session")
    assert first is not None
    assert second is not None
    assert first != second
    with httpx.Client(base_url=harness.url, cookies={"graphctx_session": first}) as old:
        assert old.get("/ui/search", follow_redirects=False).status_code == 303
    assert browser.get("/ui/search").status_code == 200


def test_behind_a_tls_proxy_the_session_cookie_is_secure(
    browser: httpx.Client, harness: Harness
) -> None:
    """The proxy terminates TLS and forwards the public Host: the app sees plain http."""
    public = {"Host": "explorer.example.com"}
    token = login_form(browser)
    response = browser.post(
        "/ui/login",
        data={"api_key": harness.keys["rita"], "next": "/ui/search", "login_token": token},
        headers=public,
    )
    assert response.status_code == 303
    cookie = next(c for c in response.headers.get_list("set-cookie") if "graphctx_session=" in c)
    assert "secure" in {part.strip().lower() for part in cookie.split(";")[1:]}
