"""Closed vocabularies of the contract. Strings become these enums at the edges."""

from __future__ import annotations

from enum import StrEnum


class RetrievalMode(StrEnum):
    """Which retrieval routes a request allows. ``auto`` lets the router decide."""

    AUTO = "auto"
    HYBRID = "hybrid"
    GRAPH = "graph"
    TEXT2CYPHER = "text2cypher"


class Freshness(StrEnum):
    """current: valid now; stale: superseded or expired; unknown: no source timestamps."""

    CURRENT = "current"
    STALE = "stale"
    UNKNOWN = "unknown"


class UnanswerableReason(StrEnum):
    NO_EVIDENCE = "no_evidence"
    ALL_DENIED = "all_denied"
    FRESHNESS_UNMET = "freshness_unmet"
    BUDGET_TOO_SMALL = "budget_too_small"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    MODE_UNSUPPORTED = "mode_unsupported"
    LLM_UNAVAILABLE = "llm_unavailable"  # text2cypher: the LLM endpoint failed


class DenialReason(StrEnum):
    """Why evidence was withheld. Never names the withheld item."""

    OUT_OF_SCOPE = "out_of_scope"
    NOT_VISIBLE_AT_OUTPUT = "not_visible_at_output"


class NodeKind(StrEnum):
    """Kinds of nodes a provenance path can pass through."""

    DOCUMENT = "Document"
    CHUNK = "Chunk"
    ENTITY = "Entity"
    CONCEPT = "Concept"
    CLAIM = "Claim"
    EVIDENCE = "Evidence"


class RetrieverName(StrEnum):
    FULLTEXT = "fulltext"
    VECTOR = "vector"
    GRAPH = "graph"


class StageStatus(StrEnum):
    OK = "ok"
    TIMED_OUT = "timed_out"
    FAILED = "failed"
    SKIPPED = "skipped"
