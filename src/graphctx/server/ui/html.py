"""Escaped HTML building blocks and the page shell, without a template engine.

graphctx ships no template dependency, and the explorer's markup is small, so pages are built
from functions. :class:`Html` marks a string as already safe; everything else passes through
:func:`esc` on the way in, so document text can never become markup.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

__all__ = ["Html", "esc", "join", "page", "tag", "void"]


class Html(str):
    """A string that is already markup. Any other str reaching :func:`tag` is escaped."""

    __slots__ = ()

    def __add__(self, other: str) -> Html:
        return Html(str.__add__(self, other if isinstance(other, Html) else esc(other)))


STYLESHEET = "/ui/static/explorer.css"
SCRIPT = "/ui/static/explorer.js"
ICON = "/ui/static/favicon.svg"  # else the browser asks for /favicon.ico, outside /ui


def esc(value: object) -> Html:
    return Html(escape(str(value), quote=True))


def join(parts: Iterable[Html], sep: str = "") -> Html:
    return Html(sep.join(parts))


def tag(name: str, body: Html | str = "", /, **attributes: object) -> Html:
    """``<name attrs>body</name>``; a str body is escaped, ``True`` makes a bare attribute.

    Attribute names use ``_`` for ``-`` and a trailing ``_`` for Python keywords (``class_``).
    """
    rendered = []
    for key, value in attributes.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        rendered.append(f" {attr}" if value is True else f' {attr}="{esc(value)}"')
    inner = body if isinstance(body, Html) else esc(body)
    return Html(f"<{name}{''.join(rendered)}>{inner}</{name}>")


def void(name: str, /, **attributes: object) -> Html:
    """A void element (``input``, ``meta``, ``link``)."""
    element = tag(name, **attributes)
    return Html(element[: -len(f"</{name}>")])


def page(title: str, body: Html, *, principal: str | None = None, csrf: str | None = None) -> Html:
    """The shell every explorer page shares: one stylesheet, one script, nothing external."""
    account = Html("")
    if principal is not None and csrf is not None:
        account = tag(
            "form",
            join(
                [
                    tag("span", f"Signed in as {principal}", class_="who"),
                    void("input", type="hidden", name="csrf", value=csrf),
                    tag("button", "Sign out", type="submit"),
                ]
            ),
            method="post",
            action="/ui/logout",
            class_="account",
        )
    header = tag(
        "header",
        join([tag("a", "graphctx evidence explorer", href="/ui/search", class_="brand"), account]),
    )
    return Html(
        "<!doctype html>\n"
        + tag(
            "html",
            join(
                [
                    tag(
                        "head",
                        join(
                            [
                                void("meta", charset="utf-8"),
                                void(
                                    "meta",
                                    name="viewport",
                                    content="width=device-width, initial-scale=1",
                                ),
                                tag("title", f"{title} - graphctx"),
                                void("link", rel="icon", href=ICON, type="image/svg+xml"),
                                void("link", rel="stylesheet", href=STYLESHEET),
                                tag("script", "", src=SCRIPT, defer=True),
                            ]
                        ),
                    ),
                    tag(
                        "body",
                        join([tag("a", "Skip to content", href="#main", class_="skip"), header])
                        + tag("main", body, id="main"),
                    ),
                ]
            ),
            lang="en",
        )
    )
