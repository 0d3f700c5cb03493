"""The explorer's whole search state, as it travels in the URL query string.

The page is a plain GET form, so reload, back/forward and a shared link all reproduce the same
search: the URL *is* the state. Parsing never raises: a malformed field falls back to its
default and is reported as a notice on the page, so a hand-edited link still opens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Final
from urllib.parse import urlencode

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.contract.request import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_MS,
    MAX_QUERY_CHARS,
    NAME_PATTERN,
    NAMESPACE_PATTERN,
)

__all__ = ["PARAM", "SearchState", "parse_state"]

_NAME = re.compile(NAME_PATTERN)
_NAMESPACE = re.compile(NAMESPACE_PATTERN)


class PARAM:
    """Query-string names (short, stable: they appear in shared links)."""

    PROJECT: Final = "project"
    QUERY: Final = "q"
    MODE: Final = "mode"
    SCOPE: Final = "scope"
    MAX_TOKENS: Final = "max_tokens"
    TIMEOUT_MS: Final = "timeout_ms"
    FRESH_SINCE: Final = "fresh_since"
    COMPARE_AS: Final = "as"


@dataclass(frozen=True)
class SearchState:
    project: str | None = None
    query: str = ""
    mode: RetrievalMode = RetrievalMode.AUTO
    scopes: tuple[str, ...] = ()  # empty: every scope the grant holds
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    fresh_since: date | None = None
    compare_as: str | None = None
    notices: tuple[str, ...] = field(default=(), compare=False)

    @property
    def runnable(self) -> bool:
        return self.project is not None and bool(self.query.strip())

    def with_project(self, project: str) -> SearchState:
        return replace(self, project=project)

    def to_query(self, *, compare_as: str | None = None) -> str:
        """The canonical query string; ``compare_as`` overrides the compared principal."""
        pairs: list[tuple[str, str]] = []
        if self.project is not None:
            pairs.append((PARAM.PROJECT, self.project))
        pairs.append((PARAM.QUERY, self.query))
        pairs.append((PARAM.MODE, self.mode.value))
        pairs.extend((PARAM.SCOPE, scope) for scope in self.scopes)
        pairs.append((PARAM.MAX_TOKENS, str(self.max_tokens)))
        pairs.append((PARAM.TIMEOUT_MS, str(self.timeout_ms)))
        if self.fresh_since is not None:
            pairs.append((PARAM.FRESH_SINCE, self.fresh_since.isoformat()))
        other = compare_as if compare_as is not None else self.compare_as
        if other is not None:
            pairs.append((PARAM.COMPARE_AS, other))
        return urlencode(pairs)

    def request_for(
        self, principal_id: str, scopes: Sequence[str], trace_id: str
    ) -> ContextRequest:
        """The ContextRequest this state asks for, as ``principal_id`` within ``scopes``."""
        assert self.project is not None, "only a runnable state becomes a request"
        fresh = (
            None
            if self.fresh_since is None
            else datetime.combine(self.fresh_since, datetime.min.time(), tzinfo=UTC)
        )
        return ContextRequest(
            query=self.query,
            principal_id=principal_id,
            allowed_scopes=sorted(scopes),
            namespace=self.project,
            retrieval_mode=self.mode,
            max_tokens=self.max_tokens,
            timeout_ms=self.timeout_ms,
            freshness_required_at=fresh,
            trace_id=trace_id,
        )


def parse_state(params: Mapping[str, Sequence[str]]) -> SearchState:
    """``params`` maps each name to all its values (Starlette's ``multi_items`` grouped)."""
    notices: list[str] = []

    def first(name: str) -> str | None:
        values = params.get(name, ())
        return values[0] if values else None

    project = first(PARAM.PROJECT)
    if project is not None and not _NAMESPACE.fullmatch(project):
        notices.append("the project in the link is not a project name")
        project = None
    query = (first(PARAM.QUERY) or "")[:MAX_QUERY_CHARS]
    mode = RetrievalMode.AUTO
    raw_mode = first(PARAM.MODE)
    if raw_mode:
        try:
            mode = RetrievalMode(raw_mode)
        except ValueError:
            notices.append(f"unknown mode; using {mode.value}")
    scopes = tuple(sorted({s for s in params.get(PARAM.SCOPE, ()) if _NAME.fullmatch(s)}))
    compare_as = first(PARAM.COMPARE_AS) or None
    if compare_as is not None and not _NAME.fullmatch(compare_as):
        notices.append("the compared principal is not a principal name")
        compare_as = None
    return SearchState(
        project=project,
        query=query,
        mode=mode,
        scopes=scopes,
        max_tokens=_positive(first(PARAM.MAX_TOKENS), DEFAULT_MAX_TOKENS, "max_tokens", notices),
        timeout_ms=_positive(first(PARAM.TIMEOUT_MS), DEFAULT_TIMEOUT_MS, "timeout_ms", notices),
        fresh_since=_date(first(PARAM.FRESH_SINCE), notices),
        compare_as=compare_as,
        notices=tuple(notices),
    )


def _positive(raw: str | None, default: int, name: str, notices: list[str]) -> int:
    if not raw:
        return default
    if raw.isdigit() and 0 < int(raw) <= 10**9:
        return int(raw)
    notices.append(f"{name} must be a positive whole number; using {default}")
    return default


def _date(raw: str | None, notices: list[str]) -> date | None:
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        notices.append("the freshness date must look like 2026-11-29; ignored")
        return None
