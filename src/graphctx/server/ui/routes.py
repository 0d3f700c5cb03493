"""``/ui``: the evidence explorer's routes, behind a session that stands for an API key.

The API-key middleware lets ``/ui`` paths through (a browser cannot send the header on a
navigation); these routes authenticate instead, from the session cookie, and apply the same
per-identity rate limit. Data is read only through :mod:`graphctx.server.ui.views`, i.e.
through :class:`~graphctx.server.service.GraphctxService`. Every response forbids framing,
sniffing, referrers (search URLs hold queries) and caching, and carries a self-only CSP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from importlib import resources
from typing import Final
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, FastAPI, Request
from starlette.responses import RedirectResponse, Response

from graphctx.server.auth import Authenticator, Credentials, Identity
from graphctx.server.errors import AuthenticationError, RateLimitedError
from graphctx.server.http.deps import services_of, trace_id_of
from graphctx.server.ratelimit import RateLimiter
from graphctx.server.ui import pages, views
from graphctx.server.ui.html import Html
from graphctx.server.ui.sessions import (
    Session,
    Sessions,
    SessionStore,
    new_login_token,
    tokens_match,
)
from graphctx.server.ui.shared_sessions import SharedSessionStore
from graphctx.server.ui.state import SearchState, parse_state
from graphctx.server.workers import SharedState

__all__ = ["SESSION_COOKIE", "UiContext", "install_ui", "router"]

SESSION_COOKIE: Final = "graphctx_session"
LOGIN_COOKIE: Final = "graphctx_login"
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})
LOGIN_TOKEN_MAX_AGE_S: Final = 10 * 60
MAX_KEY_CHARS: Final = 512
HOME: Final = "/ui/search"
STATIC_TYPES: Final = {
    "explorer.css": "text/css",
    "explorer.js": "text/javascript",
    "favicon.svg": "image/svg+xml",
}
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
}

router = APIRouter(prefix="/ui", include_in_schema=False)


@dataclass(frozen=True)
class UiContext:
    """What the explorer shares with the API: the same authenticator and rate limiter."""

    authenticator: Authenticator
    limiter: RateLimiter
    sessions: Sessions


def install_ui(
    app: FastAPI,
    authenticator: Authenticator,
    limiter: RateLimiter,
    shared: SharedState | None = None,
) -> None:
    """Mount the explorer, sharing the API's authenticator and rate limiter (and, in a
    multi-worker service, the other workers' sessions)."""
    sessions: Sessions = SessionStore() if shared is None else SharedSessionStore(shared.database)
    app.state.graphctx_ui = UiContext(authenticator, limiter, sessions)
    app.include_router(router)


def ui_context(request: Request) -> UiContext:
    context: UiContext = request.app.state.graphctx_ui
    return context


# --- entry and static files -------------------------------------------------------------------
@router.get("")
async def home() -> Response:
    return _redirect(HOME)


@router.get("/static/{name}")
async def static(name: str) -> Response:
    media_type = STATIC_TYPES.get(name)
    if media_type is None:
        return _secured(Response("not found", status_code=404, media_type="text/plain"))
    body = resources.files("graphctx.server.ui").joinpath("static", name).read_bytes()
    response = _secured(Response(body, media_type=media_type))
    response.headers["Cache-Control"] = "no-cache"
    return response


# --- login and logout -------------------------------------------------------------------------
@router.get("/login")
async def login_form(request: Request) -> Response:
    return _login_response(request, _safe_next(request.query_params.get("next")))


@router.post("/login")
async def login(request: Request) -> Response:
    form = await request.form()
    next_url = _safe_next(_text(form.get("next")))
    if not tokens_match(request.cookies.get(LOGIN_COOKIE), _text(form.get("login_token"))):
        return _login_response(
            request, next_url, "The sign-in form expired; please try again.", 400
        )
    key = _text(form.get("api_key")).strip()
    context = ui_context(request)
    try:
        if not key or len(key) > MAX_KEY_CHARS:
            raise AuthenticationError("the API key is not valid")
        client = request.client.host if request.client is not None else ""
        identity = await context.authenticator.authenticate(Credentials(api_key=key, client=client))
    except RateLimitedError:
        return _login_response(request, next_url, "Too many attempts; wait and try again.", 429)
    except AuthenticationError:
        return _login_response(request, next_url, "That API key was not accepted.", 401)
    context.sessions.revoke(request.cookies.get(SESSION_COOKIE))  # never reuse a session id
    session = context.sessions.create(identity)
    response = _redirect(next_url)
    response.set_cookie(
        SESSION_COOKIE,
        session.session_id,
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=cookie_must_be_secure(request),
    )
    response.delete_cookie(LOGIN_COOKIE, path="/ui/login")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    context = ui_context(request)
    session_id = request.cookies.get(SESSION_COOKIE)
    session = context.sessions.resolve(session_id)
    form = await request.form()
    if session is not None and not tokens_match(session.csrf_token, _text(form.get("csrf"))):
        return _page(
            pages.message_page(
                "Not signed out",
                "The form was not valid; reload and retry.",
                session.identity,
                session.csrf_token,
            ),
            403,
        )
    context.sessions.revoke(session_id)
    response = _redirect("/ui/login")
    response.delete_cookie(SESSION_COOKIE, path="/ui")
    return response


# --- the explorer -----------------------------------------------------------------------------
@router.get("/search")
async def search(request: Request) -> Response:
    session = _session_or_none(request)
    if session is None:
        return _to_login(request)
    if (limited := _rate_limited(request, session)) is not None:
        return limited
    identity = session.identity
    services = services_of(request)
    state = _normalised(parse_state(_params(request)), identity)
    outcome = None
    if state.runnable:
        outcome = await views.search(services.service, identity, state, trace_id_of(request))
    principals = _principals(request, identity, state)
    html = pages.search_page(
        identity, session.csrf_token, state, services.settings.limits, principals, outcome
    )
    return _page(html)


@router.get("/compare")
async def compare(request: Request) -> Response:
    session = _session_or_none(request)
    if session is None:
        return _to_login(request)
    if (limited := _rate_limited(request, session)) is not None:
        return limited
    identity = session.identity
    if not identity.can_impersonate:
        text = "Comparing principals needs a key that may act for other principals."
        return _page(pages.message_page("Not allowed", text, identity, session.csrf_token), 403)
    services = services_of(request)
    state = _normalised(parse_state(_params(request)), identity)
    principals = _principals(request, identity, state)
    other = state.compare_as or next((p for p in principals if p != identity.principal_id), None)
    if not state.runnable or other is None:
        return _redirect(f"{HOME}?{state.to_query()}")
    state = replace(state, compare_as=other)
    comparison = await views.compare(
        services.service, services.settings, identity, state, other, trace_id_of(request)
    )
    html = pages.compare_page(
        identity, session.csrf_token, state, services.settings.limits, principals, comparison
    )
    return _page(html)


# --- helpers ----------------------------------------------------------------------------------
def _session_or_none(request: Request) -> Session | None:
    session = ui_context(request).sessions.resolve(request.cookies.get(SESSION_COOKIE))
    if session is not None:
        # The access log names the subject, as it does for API-key requests.
        request.scope.setdefault("state", {})["identity"] = session.identity
    return session


def _rate_limited(request: Request, session: Session) -> Response | None:
    wait_s = ui_context(request).limiter.acquire(session.identity.subject)
    if wait_s <= 0:
        return None
    text = "Too many requests for this key; wait a moment and reload."
    response = _page(
        pages.message_page("Slow down", text, session.identity, session.csrf_token), 429
    )
    response.headers["Retry-After"] = str(max(1, math.ceil(wait_s)))
    return response


def _normalised(state: SearchState, identity: Identity) -> SearchState:
    """Default the project to the first granted one; keep only scopes the grant holds."""
    if state.project is None and identity.projects:
        state = state.with_project(sorted(identity.projects)[0])
    grant = identity.grant(state.project) if state.project is not None else None
    if grant is None:
        return state
    kept = tuple(s for s in state.scopes if s in grant.scopes)
    if state.scopes and not kept:
        notice = "none of the linked scopes is granted here; searching all of yours"
        return replace(state, scopes=(), notices=(*state.notices, notice))
    return replace(state, scopes=kept)


def _principals(request: Request, identity: Identity, state: SearchState) -> list[str]:
    """Who an impersonating identity may compare with in the project (nobody otherwise)."""
    if state.project is None or not identity.can_impersonate:
        return []
    return list(views.principals_in(services_of(request).settings, state.project))


def _params(request: Request) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for name, value in request.query_params.multi_items():
        grouped.setdefault(name, []).append(value)
    return grouped


def _safe_next(raw: str | None) -> str:
    """Only a path inside the explorer (never another host, never the login routes)."""
    if not raw or "\\" in raw or raw.startswith("//"):
        return HOME
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc or not parts.path.startswith("/ui/"):
        return HOME
    if parts.path in ("/ui/login", "/ui/logout"):
        return HOME
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _to_login(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return _redirect(f"/ui/login?{urlencode({'next': target})}")


def _login_response(
    request: Request, next_url: str, error: str | None = None, status: int = 200
) -> Response:
    token = new_login_token()
    response = _page(pages.login_page(next_url=next_url, login_token=token, error=error), status)
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        max_age=LOGIN_TOKEN_MAX_AGE_S,
        path="/ui/login",
        httponly=True,
        samesite="strict",
        secure=cookie_must_be_secure(request),
    )
    return response


def cookie_must_be_secure(request: Request) -> bool:
    """``Secure`` unless plain http to this machine itself (local use and tests).

    Behind the TLS-terminating proxy a deployment needs, the app sees plain http but the
    public host name, so the cookie stays ``Secure``; plain http to a non-loopback host does
    not get a session at all (browsers drop the cookie), by design.
    """
    return request.url.scheme == "https" or request.url.hostname not in LOOPBACK_HOSTS


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _page(html: Html, status: int = 200) -> Response:
    return _secured(Response(str(html), status_code=status, media_type="text/html"))


def _redirect(url: str) -> Response:
    return _secured(RedirectResponse(url, status_code=303))


def _secured(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    return response
