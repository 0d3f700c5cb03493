"""Contract: the estimator never undercounts o200k_base or cl100k_base on natural text."""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from pathlib import Path

import pytest

from graphctx.context import EstimatingCounter, PureTiktokenCounter
from graphctx.context.estimate import EstimateTarget

DATA = Path(__file__).parent / "data"


def _english() -> list[str]:
    docs = [inspect.getdoc(obj) or "" for obj in (json, re, textwrap, inspect, Path, pytest.raises)]
    return [d for d in docs if d]


def _code() -> list[str]:
    source = inspect.getsource(textwrap) + inspect.getsource(json.encoder)
    lines = source.splitlines()
    return ["\n".join(lines[i : i + 30]) for i in range(0, len(lines), 30)]


def _pieces(texts: list[str]) -> list[str]:
    """Whole texts, their lines, their sentences and their words."""
    out: list[str] = []
    for text in texts:
        out.append(text)
        out.extend(line for line in text.splitlines() if line.strip())
        out.extend(s for s in re.split(r"(?<=[.!?다요])\s+", text) if s.strip())
        out.extend(text.split())
    return out


CORPORA = {
    "korean": (DATA / "korean.txt").read_text(encoding="utf-8").splitlines(),
    "mixed": (DATA / "mixed.txt").read_text(encoding="utf-8").splitlines(),
    "english": _english(),
    "code": _code(),
}
CORPORA["korean"].append(" ".join(CORPORA["korean"]))
CORPORA["mixed"].append("\n".join(CORPORA["mixed"]))
EXACT = {name: PureTiktokenCounter(name) for name in ("o200k_base", "cl100k_base")}


@pytest.mark.parametrize("kind", sorted(CORPORA))
@pytest.mark.parametrize("target", ["any", "o200k_base", "cl100k_base"])
def test_estimate_never_undercounts_the_exact_encodings(kind: str, target: EstimateTarget) -> None:
    estimator = EstimatingCounter(target)
    encodings = list(EXACT) if target == "any" else [target]
    under = [
        (text[:40], estimator.count(text), name, EXACT[name].count(text))
        for text in _pieces(CORPORA[kind])
        for name in encodings
        if estimator.count(text) < EXACT[name].count(text)
    ]
    assert under == []


@pytest.mark.parametrize(
    ("kind", "target", "ceiling"),
    [
        ("korean", "cl100k_base", 1.6),
        ("korean", "o200k_base", 1.7),
        ("english", "o200k_base", 1.6),
        ("code", "o200k_base", 1.6),
        ("korean", "any", 2.6),
    ],
)
def test_estimate_overcount_on_whole_texts_stays_moderate(
    kind: str, target: EstimateTarget, ceiling: float
) -> None:
    texts = CORPORA[kind]
    exact = EXACT["o200k_base" if target == "any" else target]
    ratio = sum(EstimatingCounter(target).count(t) for t in texts) / sum(
        exact.count(t) for t in texts
    )
    assert 1.0 <= ratio <= ceiling


def test_estimate_of_empty_text_is_zero_and_never_exceeds_utf8_bytes() -> None:
    estimator = EstimatingCounter()
    assert estimator.count("") == 0
    assert all(estimator.count(t) <= len(t.encode()) for t in ["a", "해", "!?", " ", "ab cd"])


def test_estimator_name_says_it_is_an_estimate() -> None:
    assert EstimatingCounter("cl100k_base").name == "estimate:cl100k_base"
