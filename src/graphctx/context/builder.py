"""``build_context``: pack, render and describe a context in one call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphctx.context.budget import BudgetPlan
from graphctx.context.evidence import DEFAULT_PACKING_POLICY, Evidence, PackingPolicy, PackResult
from graphctx.context.manifest import ContextManifest, build_manifest
from graphctx.context.packing import pack_to_budget
from graphctx.context.rendering import render_context, render_messages
from graphctx.context.tokens import TokenCounter
from graphctx.llm.port import ChatMessage

__all__ = ["ContextBundle", "build_context"]


@dataclass(frozen=True)
class ContextBundle:
    pack: PackResult[Evidence]
    messages: tuple[ChatMessage, ...]
    manifest: ContextManifest


def build_context(
    question: str,
    evidence: Sequence[Evidence],
    counter: TokenCounter,
    *,
    budget_tokens: int,
    policy: PackingPolicy = DEFAULT_PACKING_POLICY,
    plan: BudgetPlan | None = None,
    include_text_hashes: bool = False,
) -> ContextBundle:
    """Pack ``evidence`` into ``budget_tokens``, render the chat messages, build the manifest."""
    pack = pack_to_budget(evidence, budget_tokens, counter, policy)
    manifest = build_manifest(
        pack,
        plan=plan,
        include_text_hashes=include_text_hashes,
        rendered_context_tokens=counter.count(render_context(pack.blocks)),
    )
    return ContextBundle(pack, render_messages(question, pack), manifest)
