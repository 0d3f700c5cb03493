"""What the explorer shows, fetched through :class:`GraphctxService` and nothing else.

Every bundle comes from ``GraphctxService.retrieve``: the same authorisation, caps, slots and
metrics as ``POST /v1/context``. The one extra read is the surrounding text of each item,
from ``GraphctxService.surrounding``: the same authorisation again, then the provider's scoped
call (:meth:`graphctx.provider.ContextProvider.asurrounding_text`: the provider's effective
scopes, the output gate's re-check) - never a rule of our own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from graphctx.contract import ContextResponse, EvidenceItem
from graphctx.errors import GraphctxError
from graphctx.retrieve.surrounding import Surrounding
from graphctx.server.auth import Identity
from graphctx.server.config import ServiceSettings
from graphctx.server.http.errors import problem_for
from graphctx.server.logs import log_event
from graphctx.server.service import GraphctxService
from graphctx.server.ui.state import SearchState

__all__ = ["Comparison", "ItemView", "Outcome", "compare", "principals_in", "search"]

log = logging.getLogger("graphctx.ui")


@dataclass(frozen=True)
class ItemView:
    item: EvidenceItem
    title: str | None
    surrounding: Surrounding | None


@dataclass(frozen=True)
class Outcome:
    """One principal's bundle, or the one sentence explaining why there is none."""

    principal_id: str
    scopes: tuple[str, ...]
    response: ContextResponse | None = None
    items: tuple[ItemView, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Comparison:
    left: Outcome
    right: Outcome

    def only_left(self) -> frozenset[str]:
        return _chunks(self.left) - _chunks(self.right)

    def only_right(self) -> frozenset[str]:
        return _chunks(self.right) - _chunks(self.left)


async def search(
    service: GraphctxService,
    identity: Identity,
    state: SearchState,
    trace_id: str,
    *,
    principal_id: str | None = None,
    scopes: Sequence[str] | None = None,
) -> Outcome:
    """Run ``state`` as ``principal_id`` (default: the identity) within ``scopes``."""
    assert state.project is not None
    principal = principal_id or identity.principal_id
    try:
        grant = service.readable(identity, state.project)
        chosen = tuple(sorted(scopes if scopes is not None else state.scopes or grant.scopes))
        request = state.request_for(principal, chosen, trace_id)
        response = await service.retrieve(identity, request, face="ui")
        contexts = await service.surrounding(identity, request, response.items)
        items = tuple(
            ItemView(item, context.title, context.surrounding)
            for item, context in zip(response.items, contexts, strict=True)
        )
    except GraphctxError as exc:
        return Outcome(principal, tuple(scopes or state.scopes), error=_explain(service, exc))
    return Outcome(principal, chosen, response, items)


async def compare(
    service: GraphctxService,
    settings: ServiceSettings,
    identity: Identity,
    state: SearchState,
    other: str,
    trace_id: str,
) -> Comparison:
    """The same search as the identity and as ``other``, within scopes both may use.

    The other side asks for the other principal's configured scopes ∩ the selected ones, and
    still goes through the service as the (impersonating) identity, so it can never show more
    than the identity's own grant.
    """
    assert state.project is not None
    left = await search(service, identity, state, f"{trace_id}-a")
    granted = principals_in(settings, state.project).get(other, frozenset())
    wanted = granted.intersection(left.scopes) if left.scopes else granted
    if not wanted:
        right = Outcome(other, (), error=f"{other} holds none of the selected scopes here")
    else:
        right = await search(
            service, identity, state, f"{trace_id}-b", principal_id=other, scopes=sorted(wanted)
        )
    return Comparison(left, right)


def principals_in(settings: ServiceSettings, project: str) -> dict[str, frozenset[str]]:
    """Configured principals with a grant in ``project``, with the union of their scopes."""
    found: dict[str, frozenset[str]] = {}
    for entry in settings.keys:
        grant = entry.projects.get(project)
        if grant is not None:
            found[entry.principal] = found.get(entry.principal, frozenset()) | set(grant.scopes)
    return dict(sorted(found.items()))


def _explain(service: GraphctxService, exc: GraphctxError) -> str:
    """The sentence the API would put in ``detail``: caller errors say why, others do not."""
    problem = problem_for(exc)
    service.metrics.observe_error(problem.code)
    if problem.status >= 500:
        log_event(log, "ui request failed", logging.ERROR, code=problem.code, cause=str(exc))
    return problem.detail


def _chunks(outcome: Outcome) -> frozenset[str]:
    return frozenset(view.item.chunk_id for view in outcome.items)
