"""What the adapter tests share besides fixtures: the question, the grants, how a principal
reaches graphctx. (A module of its own: every test folder's conftest is a module named
``conftest``, so tests cannot import from theirs.)"""

from __future__ import annotations

from dataclasses import dataclass

from graphctx.client import GraphctxClient
from graphctx.integrations.evidence import EvidenceSource
from graphctx.provider import ContextProvider
from graphctx.testing.service import Harness

QUESTION = "How do I roll back a deploy?"
GRANTS = {"rita": frozenset({"public"}), "ada": frozenset({"public", "secret"})}


@dataclass(frozen=True)
class Sources:
    """How one principal reaches graphctx: ``source(principal)`` answers as that principal."""

    kind: str  # "served" or "in_process"
    harness: Harness
    provider: ContextProvider
    clients: dict[str, GraphctxClient]

    def source(self, principal: str) -> EvidenceSource:
        return self.clients[principal] if self.kind == "served" else self.provider
