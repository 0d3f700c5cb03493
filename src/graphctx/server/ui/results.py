"""One bundle as the agent received it: items in order, then how it was made.

Items keep the bundle's order and citation ids. Each shows its content (exactly the text the
agent got), the span inside the visible surrounding text on demand, source, version,
freshness, per-retriever scores, how it was reached (and, for graph expansion, the path), then
the bundle's budgets, denials and routing decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from graphctx.contract import ContextResponse, EvidenceItem, NodeKind
from graphctx.server.ui.graph import path_svg
from graphctx.server.ui.html import Html, esc, join, tag
from graphctx.server.ui.views import ItemView, Outcome

__all__ = ["render_outcome"]

LINKABLE_SCHEMES: Final = ("http://", "https://")


def render_outcome(outcome: Outcome, *, key: str, marks: Mapping[str, str] | None = None) -> Html:
    """``key`` keeps element ids unique when two outcomes share a page; ``marks`` labels items
    by chunk id (the compare view's "only here")."""
    if outcome.response is None:
        return tag("p", outcome.error or "no result", class_="error", role="alert")
    response = outcome.response
    parts = [_verdict(response), _gauges(response)]
    if outcome.items:
        parts.append(
            tag(
                "ol",
                join(
                    _item(view, key, (marks or {}).get(view.item.chunk_id))
                    for view in outcome.items
                ),
                class_="items",
                aria_label="Evidence items in bundle order",
            )
        )
    parts.extend([_denied(response), _route(response)])
    return join(parts)


def _verdict(response: ContextResponse) -> Html:
    if response.answerable:
        count = len(response.items)
        text = f"Answerable: {count} item{'s' if count != 1 else ''}"
        return tag("p", text, class_="verdict ok")
    reason = response.reason.value if response.reason is not None else "unknown"
    return tag("p", f"Not answerable: {reason}", class_="verdict no", role="status")


def _gauges(response: ContextResponse) -> Html:
    limits = response.limits
    return tag(
        "div",
        join(
            [
                _gauge("Tokens", limits.used_tokens, limits.max_tokens, "tokens"),
                _gauge(
                    "Time",
                    min(limits.elapsed_ms, limits.timeout_ms),
                    limits.timeout_ms,
                    "ms",
                    shown=limits.elapsed_ms,
                ),
            ]
        ),
        class_="gauges",
    )


def _gauge(label: str, value: int, maximum: int, unit: str, *, shown: int | None = None) -> Html:
    text = f"{label}: {shown if shown is not None else value} / {maximum} {unit}"
    return tag(
        "label",
        join(
            [
                tag("span", text),
                tag(
                    "meter", "", min=0, max=maximum, value=value, high=int(maximum * 0.9), optimum=0
                ),
            ]
        ),
        class_="gauge",
    )


def _item(view: ItemView, key: str, mark: str | None) -> Html:
    item = view.item
    anchor = f"{key}-{item.citation_id}"
    heading = join(
        [
            tag("span", item.citation_id, class_="cite"),
            tag("span", view.title or item.document_id, class_="title"),
            _freshness(item),
            tag("span", mark, class_="mark-diff") if mark else Html(""),
        ]
    )
    body = [
        tag("h3", heading, id=f"{anchor}-h"),
        _facts(item),
        tag("blockquote", item.content, class_="content"),
        _in_document(view),
        _scores(item),
        _how_reached(item, anchor),
    ]
    return tag(
        "li",
        join(body),
        id=anchor,
        class_="item" + (" item-diff" if mark else ""),
        data_citation=item.citation_id,
        data_document=item.document_id,
        data_chunk=item.chunk_id,
        data_freshness=item.freshness.value,
        aria_labelledby=f"{anchor}-h",
    )


def _freshness(item: EvidenceItem) -> Html:
    value = item.freshness.value
    return tag("span", value, class_=f"badge badge-{value}", title=f"freshness: {value}")


def _facts(item: EvidenceItem) -> Html:
    source: Html
    if item.source_uri.startswith(LINKABLE_SCHEMES):
        source = tag("a", item.source_uri, href=item.source_uri, rel="noopener noreferrer")
    else:
        source = tag("code", item.source_uri)
    rows = [
        ("Source", source),
        ("Document", tag("code", item.document_id)),
        ("Version", tag("code", item.document_version)),
        (
            "Span",
            esc(
                f"{item.span.start_char}-{item.span.end_char}"
                + (" (truncated)" if item.truncated else "")
            ),
        ),
        ("Tokens", esc(item.tokens)),
    ]
    return tag("dl", join(tag("div", tag("dt", k) + tag("dd", v)) for k, v in rows), class_="facts")


def _in_document(view: ItemView) -> Html:
    around = view.surrounding
    if around is None:
        return tag("p", "Surrounding text is not available for this item.", class_="muted")
    text = join(
        [
            esc("… " if around.truncated_before else ""),
            esc(around.before),
            tag("mark", around.highlighted),
            esc(around.after),
            esc(" …" if around.truncated_after else ""),
        ]
    )
    return tag(
        "details",
        tag("summary", "Show the span in its document") + tag("p", text, class_="in-document"),
        class_="span",
    )


def _scores(item: EvidenceItem) -> Html:
    scores = item.retrieval_scores
    cells = [
        ("vector", scores.vector),
        ("fulltext", scores.fulltext),
        ("graph", scores.graph),
        ("fused", scores.fused),
    ]
    head = tag("tr", join(tag("th", name, scope="col") for name, _ in cells))
    values = tag("tr", join(tag("td", "—" if v is None else f"{v:.4f}") for _, v in cells))
    return tag(
        "table",
        tag("caption", f"Retrieval scores (not the order: this item's rank is {item.rank})")
        + tag("thead", head)
        + tag("tbody", values),
        class_="scores",
    )


def _how_reached(item: EvidenceItem, anchor: str) -> Html:
    path = item.provenance_path
    direct = path[0].kind is NodeKind.DOCUMENT
    found_by = [
        n
        for n, v in (
            ("fulltext", item.retrieval_scores.fulltext),
            ("vector", item.retrieval_scores.vector),
        )
        if v is not None
    ]
    if direct:
        text = "Route: direct hit" + (f" ({', '.join(found_by)})" if found_by else "")
        return tag("p", text, class_="route-item")
    return tag(
        "figure",
        tag("figcaption", "Route: graph expansion, path")
        + tag(
            "div",
            path_svg(path, anchor),
            class_="graph-scroll",
            tabindex=0,
            role="group",
            aria_label="Provenance path graph",
        ),
        class_="route-item graph",
    )


def _denied(response: ContextResponse) -> Html:
    total = sum(d.count for d in response.denied)
    heading = tag("h3", f"Withheld: {total}")
    if not response.denied:
        return tag("section", heading + tag("p", "Nothing was withheld."), class_="denied")
    rows = join(tag("li", f"{d.count} at {d.stage}: {d.reason.value}") for d in response.denied)
    return tag("section", heading + tag("ul", rows), class_="denied")


def _route(response: ContextResponse) -> Html:
    route = response.manifest.route
    retrievers = ", ".join(r.value for r in route.retrievers) or "none"
    reasons = join(tag("li", reason) for reason in route.reasons) or tag("li", "no reason given")
    stages = join(
        tag(
            "tr",
            tag("td", s.stage)
            + tag("td", s.status.value)
            + tag("td", f"{s.elapsed_ms} ms")
            + tag("td", str(s.candidates)),
        )
        for s in response.manifest.stages
    )
    head = tag(
        "tr", join(tag("th", h, scope="col") for h in ("stage", "status", "time", "candidates"))
    )
    return tag(
        "section",
        join(
            [
                tag("h3", "Routing decision"),
                tag("p", f"Mode {route.requested_mode.value}; retrievers: {retrievers}"),
                tag("ul", reasons, class_="reasons"),
                tag(
                    "table",
                    tag("caption", "Pipeline stages") + tag("thead", head) + tag("tbody", stages),
                    class_="stages",
                ),
                tag("p", f"Trace id: {response.trace_id}", class_="muted"),
            ]
        ),
        class_="route",
    )
