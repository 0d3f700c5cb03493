"""Context builder: the compiler between retrieval and generation.

Token counting (``tokens``, ``estimate``), the budget formula (``budget``), deterministic
packing with dedup and safe truncation (``packing``), rendering into chat messages
(``rendering``), the structured answer schema and citation resolution (``answer``,
``citations``, ``generation``) and the manifest (``manifest``). Pure logic: no store access.
"""

from graphctx.context.answer import (
    AnswerContractError,
    AnswerPayload,
    AnswerStatus,
    CitationSelection,
    answer_json_schema,
    parse_answer,
)
from graphctx.context.budget import BudgetPlan, compute_evidence_budget, plan_budget
from graphctx.context.builder import ContextBundle, build_context
from graphctx.context.citations import ResolvedCitation, resolve_citations, source_map_of
from graphctx.context.estimate import EstimateTarget, EstimatingCounter
from graphctx.context.evidence import (
    DEFAULT_PACKING_POLICY,
    DropReason,
    Evidence,
    PackableEvidence,
    PackedBlock,
    PackingPolicy,
    PackResult,
    SourceRef,
    evidence_sort_key,
)
from graphctx.context.generation import AnswerOutcome, ModelCall, answer_with_citations
from graphctx.context.manifest import BlockManifest, ContextManifest, build_manifest, log_manifest
from graphctx.context.packing import pack_to_budget
from graphctx.context.rendering import (
    NO_EVIDENCE_NOTE,
    PROMPT_VERSION,
    SYSTEM_INSTRUCTION,
    messages_for_response,
    neutralise_delimiters,
    render_context,
    render_messages,
    wrapper_tokens,
)
from graphctx.context.tokens import (
    ExactEncoding,
    HuggingFaceTokenCounter,
    PureTiktokenCounter,
    TiktokenCounter,
    TokenCounter,
    default_token_counter,
    exact_token_counter,
)
from graphctx.llm.port import ChatMessage

__all__ = [
    "DEFAULT_PACKING_POLICY",
    "NO_EVIDENCE_NOTE",
    "PROMPT_VERSION",
    "SYSTEM_INSTRUCTION",
    "AnswerContractError",
    "AnswerOutcome",
    "AnswerPayload",
    "AnswerStatus",
    "BlockManifest",
    "BudgetPlan",
    "ChatMessage",
    "CitationSelection",
    "ContextBundle",
    "ContextManifest",
    "DropReason",
    "EstimateTarget",
    "EstimatingCounter",
    "Evidence",
    "ExactEncoding",
    "HuggingFaceTokenCounter",
    "ModelCall",
    "PackResult",
    "PackableEvidence",
    "PackedBlock",
    "PackingPolicy",
    "PureTiktokenCounter",
    "ResolvedCitation",
    "SourceRef",
    "TiktokenCounter",
    "TokenCounter",
    "answer_json_schema",
    "answer_with_citations",
    "build_context",
    "build_manifest",
    "compute_evidence_budget",
    "default_token_counter",
    "evidence_sort_key",
    "exact_token_counter",
    "log_manifest",
    "messages_for_response",
    "neutralise_delimiters",
    "pack_to_budget",
    "parse_answer",
    "plan_budget",
    "render_context",
    "render_messages",
    "resolve_citations",
    "source_map_of",
    "wrapper_tokens",
]
