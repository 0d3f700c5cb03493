"""The explorer's pages: login, search (form + bundle) and compare.

The search form is a plain ``GET`` form: submitting it *is* writing the state into the URL.
Every control has a visible label; the compare button appears only for identities that may
impersonate, and targets the same form state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphctx.contract import MAX_QUERY_CHARS, RetrievalMode
from graphctx.server.auth import Identity
from graphctx.server.config import LimitsConfig
from graphctx.server.ui.html import Html, esc, join, page, tag, void
from graphctx.server.ui.results import render_outcome
from graphctx.server.ui.state import PARAM, SearchState
from graphctx.server.ui.views import Comparison, Outcome

__all__ = ["compare_page", "login_page", "message_page", "search_page"]

ONLY_LEFT = "only for {}"


def login_page(*, next_url: str, login_token: str, error: str | None = None) -> Html:
    alert = tag("p", error, class_="error", role="alert", id="login-error") if error else Html("")
    form = tag(
        "form",
        join(
            [
                _field(
                    "API key",
                    void(
                        "input",
                        type="password",
                        name="api_key",
                        id="api-key",
                        required=True,
                        autocomplete="off",
                        spellcheck="false",
                        aria_describedby="login-error" if error else None,
                    ),
                    "api-key",
                ),
                void("input", type="hidden", name="next", value=next_url),
                void("input", type="hidden", name="login_token", value=login_token),
                tag("button", "Sign in", type="submit"),
            ]
        ),
        method="post",
        action="/ui/login",
        class_="login",
    )
    intro = tag(
        "p",
        "Sign in with an API key. The key is checked once and never stored in the browser; "
        "the session lasts until you sign out or leave it idle.",
    )
    return page("Sign in", tag("h1", "Sign in") + intro + alert + form)


def message_page(title: str, text: str, identity: Identity, csrf: str) -> Html:
    return page(
        title, tag("h1", title) + tag("p", text), principal=identity.principal_id, csrf=csrf
    )


def search_page(
    identity: Identity,
    csrf: str,
    state: SearchState,
    limits: LimitsConfig,
    principals: Sequence[str],
    outcome: Outcome | None,
) -> Html:
    results = Html("")
    if outcome is not None:
        results = tag(
            "section",
            tag("h2", "Evidence bundle", id="results-h") + render_outcome(outcome, key="r"),
            class_="results",
            aria_labelledby="results-h",
        )
    body = join(
        [
            tag("h1", "Search evidence"),
            _notices(state),
            _form(identity, state, limits, principals),
            results,
        ]
    )
    return page("Search", body, principal=identity.principal_id, csrf=csrf)


def compare_page(
    identity: Identity,
    csrf: str,
    state: SearchState,
    limits: LimitsConfig,
    principals: Sequence[str],
    comparison: Comparison,
) -> Html:
    left, right = comparison.left, comparison.right
    left_marks = {c: ONLY_LEFT.format(left.principal_id) for c in comparison.only_left()}
    right_marks = {c: ONLY_LEFT.format(right.principal_id) for c in comparison.only_right()}
    columns = tag(
        "div",
        _column(left, "left", left_marks) + _column(right, "right", right_marks),
        class_="compare",
    )
    summary = tag(
        "p",
        f"{len(left_marks)} item(s) only for {left.principal_id}, "
        f"{len(right_marks)} only for {right.principal_id}.",
        class_="diff-summary",
        role="status",
    )
    body = join(
        [
            tag("h1", "Compare principals"),
            _notices(state),
            _form(identity, state, limits, principals),
            tag("h2", "Side by side", id="compare-h"),
            summary,
            columns,
        ]
    )
    return page("Compare", body, principal=identity.principal_id, csrf=csrf)


def _column(outcome: Outcome, key: str, marks: Mapping[str, str]) -> Html:
    scopes = ", ".join(outcome.scopes) or "none"
    return tag(
        "section",
        tag("h3", f"As {outcome.principal_id}", id=f"{key}-h")
        + tag("p", f"Scopes asked: {scopes}", class_="muted")
        + render_outcome(outcome, key=key, marks=marks),
        class_=f"column column-{key}",
        aria_labelledby=f"{key}-h",
        data_principal=outcome.principal_id,
    )


def _notices(state: SearchState) -> Html:
    if not state.notices:
        return Html("")
    return tag("ul", join(tag("li", n) for n in state.notices), class_="notices", role="status")


def _form(
    identity: Identity, state: SearchState, limits: LimitsConfig, principals: Sequence[str]
) -> Html:
    projects = sorted(identity.projects)
    grant = identity.grant(state.project) if state.project is not None else None
    granted = sorted(grant.scopes) if grant is not None else []
    chosen = set(state.scopes) or set(granted)
    controls = [
        _field("Project", _select(PARAM.PROJECT, "project", projects, state.project), "project"),
        _field(
            "Query",
            void(
                "input",
                type="search",
                name=PARAM.QUERY,
                id="query",
                value=state.query,
                required=True,
                maxlength=MAX_QUERY_CHARS,
                autofocus=not state.query,
            ),
            "query",
        ),
        _field(
            "Mode",
            _select(PARAM.MODE, "mode", [m.value for m in RetrievalMode], state.mode.value),
            "mode",
        ),
        tag(
            "fieldset",
            tag("legend", "Scopes")
            + join(
                tag(
                    "label",
                    void("input", type="checkbox", name=PARAM.SCOPE, value=s, checked=s in chosen)
                    + esc(f" {s}"),
                    class_="check",
                )
                for s in granted
            ),
            class_="scopes",
        ),
        _field(
            "Max tokens",
            _number(PARAM.MAX_TOKENS, "max-tokens", state.max_tokens, limits.max_tokens),
            "max-tokens",
        ),
        _field(
            "Timeout (ms)",
            _number(PARAM.TIMEOUT_MS, "timeout-ms", state.timeout_ms, limits.max_timeout_ms),
            "timeout-ms",
        ),
        _field(
            "Changed since",
            void(
                "input",
                type="date",
                name=PARAM.FRESH_SINCE,
                id="fresh-since",
                value=state.fresh_since.isoformat() if state.fresh_since else "",
            ),
            "fresh-since",
        ),
    ]
    buttons = [tag("button", "Search", type="submit", id="run-search")]
    if identity.can_impersonate:
        others = [p for p in principals if p != identity.principal_id]
        controls.append(
            _field(
                "Compare as",
                _select(PARAM.COMPARE_AS, "compare-as", others, state.compare_as),
                "compare-as",
            )
        )
        buttons.append(
            tag("button", "Compare", type="submit", formaction="/ui/compare", id="run-compare")
        )
    buttons.append(tag("button", "Copy link", type="button", id="copy-link", hidden=True))
    return tag(
        "form",
        join(controls) + tag("div", join(buttons), class_="buttons"),
        method="get",
        action="/ui/search",
        role="search",
        class_="search",
    )


def _field(label: str, control: Html, control_id: str) -> Html:
    return tag("div", tag("label", label, for_=control_id) + control, class_="field")


def _select(name: str, control_id: str, options: Sequence[str], selected: str | None) -> Html:
    return tag(
        "select",
        join(tag("option", o, value=o, selected=o == selected) for o in options),
        name=name,
        id=control_id,
    )


def _number(name: str, control_id: str, value: int, maximum: int) -> Html:
    return void(
        "input",
        type="number",
        name=name,
        id=control_id,
        value=value,
        min=1,
        max=maximum,
        step=1,
        inputmode="numeric",
    )
