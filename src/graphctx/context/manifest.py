"""The context manifest: how a context was built, reproducible without storing its text."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass

from graphctx.context.budget import BudgetPlan
from graphctx.context.evidence import PackableEvidence, PackResult
from graphctx.context.rendering import PROMPT_VERSION

__all__ = ["BlockManifest", "ContextManifest", "build_manifest", "log_manifest"]

_LOG = logging.getLogger("graphctx.context")


@dataclass(frozen=True)
class BlockManifest:
    source_id: str
    evidence_id: str
    document_id: str
    document_version: str
    start_char: int
    end_char: int
    tokens: int
    truncated: bool
    content_sha256: str | None = None


@dataclass(frozen=True)
class ContextManifest:
    prompt_version: str
    token_counter: str
    evidence_budget: int
    used_tokens: int
    blocks: tuple[BlockManifest, ...]
    dropped: tuple[tuple[str, int], ...]
    plan: BudgetPlan | None = None
    rendered_context_tokens: int | None = None
    selection: str = ""  # how the blocks were selected and ordered (PackResult.explain)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form for logs and responses."""
        data = asdict(self)
        data["blocks"] = [asdict(block) for block in self.blocks]
        data["dropped"] = dict(self.dropped)
        return data


def build_manifest(
    pack: PackResult[PackableEvidence],
    *,
    plan: BudgetPlan | None = None,
    include_text_hashes: bool = False,
    rendered_context_tokens: int | None = None,
) -> ContextManifest:
    blocks = tuple(
        BlockManifest(
            source_id=block.citation_id,
            evidence_id=block.evidence.evidence_id,
            document_id=block.evidence.document_id,
            document_version=block.evidence.document_version,
            start_char=block.start_char,
            end_char=block.end_char,
            tokens=block.tokens,
            truncated=block.truncated,
            content_sha256=(
                hashlib.sha256(block.content.encode("utf-8")).hexdigest()
                if include_text_hashes
                else None
            ),
        )
        for block in pack.blocks
    )
    return ContextManifest(
        prompt_version=PROMPT_VERSION,
        token_counter=pack.counter_name,
        evidence_budget=pack.budget_tokens,
        used_tokens=pack.used_tokens,
        blocks=blocks,
        dropped=tuple(sorted(pack.dropped.items())),
        plan=plan,
        rendered_context_tokens=rendered_context_tokens,
        selection=pack.explain(),
    )


def log_manifest(
    manifest: ContextManifest, *, trace_id: str, logger: logging.Logger | None = None
) -> None:
    """One structured INFO record per built context, keyed by the request's trace id."""
    (logger or _LOG).info(
        "context built",
        extra={"trace_id": trace_id, "context_manifest": manifest.as_dict()},
    )
