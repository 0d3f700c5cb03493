"""A provenance path as a small inline SVG: nodes left to right, typed relations between them.

Inline markup, not an image: it needs no request, obeys the page's CSP (colours come from the
stylesheet through classes) and carries a text alternative listing every step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from graphctx.contract import ProvenanceStep
from graphctx.server.ui.html import Html, join, tag

__all__ = ["describe_path", "path_svg"]

NODE_W: Final = 150
NODE_H: Final = 46
GAP_W: Final = 110  # room for the relation label between two nodes
PAD: Final = 6
LABEL_CHARS: Final = 20


def describe_path(steps: Sequence[ProvenanceStep]) -> str:
    """The path in words, e.g. ``Entity svc:payment -DEPENDS_ON-> Entity svc:postgres``."""
    parts = []
    for index, step in enumerate(steps):
        node = f"{step.kind.value} {step.id}"
        parts.append(node if index == 0 else f"-{step.via or 'related'}-> {node}")
    return " ".join(parts)


def path_svg(steps: Sequence[ProvenanceStep], key: str) -> Html:
    """``key`` makes the arrow marker's id unique on a page holding several graphs."""
    marker = f"arrow-{key}"
    width = PAD * 2 + len(steps) * NODE_W + max(0, len(steps) - 1) * GAP_W
    height = PAD * 2 + NODE_H + 18
    shapes: list[Html] = [_arrow_marker(marker)]
    for index, step in enumerate(steps):
        x = PAD + index * (NODE_W + GAP_W)
        if index > 0:
            shapes.append(_edge(x - GAP_W, x, step.via or "related", marker))
        shapes.append(_node(x, step))
    return tag(
        "svg",
        join([tag("title", describe_path(steps)), *shapes]),
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {width} {height}",
        width=width,
        height=height,
        role="img",
        class_="path-graph",
        aria_label=f"Provenance path: {describe_path(steps)}",
    )


def _node(x: int, step: ProvenanceStep) -> Html:
    y = PAD + 18
    kind = step.kind.value.lower()
    return tag(
        "g",
        join(
            [
                tag("title", f"{step.kind.value} {step.id}"),
                tag("rect", x=x, y=y, width=NODE_W, height=NODE_H, rx=8, class_="node"),
                tag("text", step.kind.value, x=x + 8, y=y + 18, class_="node-kind"),
                tag("text", _short(step.id), x=x + 8, y=y + 36, class_="node-id"),
            ]
        ),
        class_=f"step step-{kind}",
    )


def _edge(x1: int, x2: int, via: str, marker: str) -> Html:
    y = PAD + 18 + NODE_H // 2
    return tag(
        "g",
        join(
            [
                tag(
                    "line",
                    x1=x1,
                    y1=y,
                    x2=x2 - 2,
                    y2=y,
                    class_="edge",
                    marker_end=f"url(#{marker})",
                ),
                tag("text", _short(via, 16), x=(x1 + x2) // 2, y=PAD + 12, class_="edge-label"),
            ]
        ),
        class_="relation",
    )


def _arrow_marker(marker: str) -> Html:
    return tag(
        "defs",
        tag(
            "marker",
            tag("path", d="M0,0 L8,4 L0,8 z", class_="arrowhead"),
            id=marker,
            viewBox="0 0 8 8",
            refX=8,
            refY=4,
            markerWidth=8,
            markerHeight=8,
            orient="auto",
        ),
    )


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
