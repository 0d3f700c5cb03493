"""Frozen records that cross the GraphStore port, in both directions."""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Final

import numpy as np
import numpy.typing as npt

from graphctx.contract import NodeKind
from graphctx.errors import DocumentConflictError, InvalidDocumentError
from graphctx.text.lexical import analyze

Vector = npt.NDArray[np.float32]

# The document ``extra`` key that carries a paged document's page start offsets ("0,1520,3011"):
# written by ingest from SourceDocument.page_starts, read back into ChunkView.page_starts.
# Reserved: a value a caller puts there (front matter, sidecar, JSON metadata) is replaced.
PAGE_STARTS_KEY: Final = "graphctx:page_starts"


class WriteOutcome(StrEnum):
    ADDED = "added"  # first version of a new document
    NEW_VERSION = "new_version"  # content or metadata changed; the previous version is superseded
    # Only the scopes changed; applied to every version. Older versions may lose scopes this
    # way, never gain one (:func:`check_scopes_of_older_versions`).
    SCOPES_UPDATED = "scopes_updated"
    UNCHANGED = "unchanged"  # identical content and metadata; nothing written


@dataclass(frozen=True)
class DocumentDates:
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None


@dataclass(frozen=True)
class NewDocument:
    """A document version to write. ``content_hash`` covers the text; ``metadata_hash`` the rest."""

    namespace: str
    document_id: str
    source_uri: str
    scopes: frozenset[str]
    source_version: str | None
    title: str | None
    media_type: str
    text: str
    dates: DocumentDates
    declared_superseded_by: str | None
    content_hash: str
    metadata_hash: str
    extra: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NewChunk:
    ordinal: int
    start_char: int
    end_char: int
    text: str
    embedding: Vector
    heading_path: tuple[str, ...] = ()


def check_chunk_span(document: NewDocument, chunk: NewChunk) -> None:
    """A chunk must be the text of its span of the document (``ValueError`` otherwise)."""
    if document.text[chunk.start_char : chunk.end_char] != chunk.text:
        raise ValueError(f"chunk {chunk.ordinal} of {document.document_id} does not match its span")


def fulltext_source(document: NewDocument, chunk: NewChunk) -> str:
    """What the full-text index analyses for a chunk, on either backend: its heading path,
    its document's title and its text."""
    return " ".join([*chunk.heading_path, document.title or "", chunk.text])


def text_terms(indexed: str, heading_path: Iterable[str], title: str | None) -> str:
    """The terms of a chunk's own text among ``indexed``, the stored terms of its
    :func:`fulltext_source`: ``index_terms(text)``, provided ``indexed`` was written by the
    current analyser.

    No analysed term spans or holds a space, so the terms of texts joined by spaces are each
    text's terms in turn: the stored ones are the heading path's and title's, then the
    text's. The text's are what follows the first ``len(analyze(heading path and title))``."""
    prefix = len(analyze(" ".join([*heading_path, title or ""])))
    parts = indexed.split(" ", prefix)
    return parts[prefix] if len(parts) > prefix else ""


@dataclass(frozen=True)
class StoredVersion:
    """What ingest needs to decide whether a document changed."""

    document_id: str
    version: str
    version_seq: int
    content_hash: str
    metadata_hash: str
    scopes: frozenset[str]


@dataclass(frozen=True)
class Expectation:
    """Compare-and-set for a write or delete: it lands only if the document's latest version
    is still ``latest`` when the store's write transaction holds its lock (``None``: the id
    must still be free). Otherwise the store raises
    :class:`~graphctx.errors.DocumentConflictError` and changes nothing."""

    latest: StoredVersion | None


@dataclass(frozen=True)
class DocumentWrite:
    """One document of a batch write (``GraphStore.write_documents``): the version, its
    embedded chunks, and the compare-and-set condition, as ``write_document`` takes them."""

    document: NewDocument
    chunks: tuple[NewChunk, ...]
    expected: Expectation | None = None


@dataclass(frozen=True)
class WriteResult:
    outcome: WriteOutcome
    document_id: str
    version: str
    chunks_written: int
    # The document's latest version after the write: the expectation of a next conditional
    # write of the same id in the same batch.
    latest: StoredVersion | None = None
    # The ids of the chunks written, in the order they were given (empty when none were).
    chunk_ids: tuple[str, ...] = ()


def check_expectation(expected: Expectation | None, current: StoredVersion | None) -> None:
    """Raise the one conflict answer unless ``current`` is what the writer expected."""
    if expected is not None and expected.latest != current:
        raise DocumentConflictError()


def check_scopes_of_older_versions(
    document: NewDocument, older_version_scopes: Iterable[frozenset[str]]
) -> None:
    """A write re-scopes every version of a document; refuse it when an older version would
    gain a scope (a redacted v2 published wider must not publish v1's text with it).
    Narrowing is always allowed. To publish under other scopes, delete the document first."""
    for scopes in older_version_scopes:
        if not document.scopes <= scopes:
            raise InvalidDocumentError(
                f"{document.document_id}: older versions of this document would become visible"
                " to scopes they do not have; delete the document first to publish it under"
                " these scopes",
                path=document.document_id,
                code="scope_widening_refused",
            )


@dataclass(frozen=True)
class ChunkHit:
    """One candidate from a store search. Higher ``score`` is better."""

    chunk_id: str
    score: float


@dataclass(frozen=True)
class ChunkView:
    """A visible chunk with everything retrieval needs about its document version."""

    chunk_id: str
    document_id: str
    document_version: str
    source_uri: str
    title: str | None
    text: str
    start_char: int
    end_char: int
    ordinal: int
    scopes: frozenset[str]
    dates: DocumentDates
    superseded: bool  # a newer version exists or the document declares a successor
    superseded_by: str | None
    page_starts: tuple[int, ...] = ()  # where each page starts in the document text (PDF)
    # index_terms(text), space-separated, read from the full-text index where the store can
    # vouch its current analyser wrote it (None: unknown; relevance then analyses the text)
    text_terms: str | None = field(default=None, compare=False, repr=False)

    def pages(self, start_char: int, end_char: int) -> tuple[int, int] | None:
        """The first and last page (1-based) a span of the document text lies on."""
        if not self.page_starts:
            return None
        first = bisect_right(self.page_starts, start_char)
        last = bisect_right(self.page_starts, max(start_char, end_char - 1))
        return max(first, 1), max(last, 1)


def with_page_starts(extra: Mapping[str, str], page_starts: tuple[int, ...]) -> dict[str, str]:
    """``extra`` with the reserved page-starts entry set from ``page_starts`` (or removed)."""
    kept = {key: value for key, value in extra.items() if key != PAGE_STARTS_KEY}
    if page_starts:
        kept[PAGE_STARTS_KEY] = ",".join(str(start) for start in page_starts)
    return kept


def page_starts_of(extra_json: object) -> tuple[int, ...]:
    """The page starts a document's stored ``extra`` JSON carries; () for an unpaged one."""
    if not isinstance(extra_json, str) or PAGE_STARTS_KEY not in extra_json:
        return ()
    try:
        value = json.loads(extra_json).get(PAGE_STARTS_KEY)
        starts = tuple(int(part) for part in value.split(","))
    except (ValueError, AttributeError, TypeError):
        return ()  # not written by ingest: treat the document as unpaged
    return starts if list(starts) == sorted(starts) else ()


@dataclass(frozen=True)
class DocumentSummary:
    document_id: str
    document_version: str
    source_uri: str
    title: str | None
    chunk_count: int
    superseded: bool


@dataclass(frozen=True)
class KnowledgeNode:
    """One declaration of an Entity, Concept, Claim or Evidence node.

    A node is visible through a visible home chunk (any ``support_link`` but MENTIONS), or,
    when it has no home chunk at all, through a visible mention. ``node_id`` is shown in
    provenance paths to anyone who can traverse the node, so it must not carry secret text;
    ``name`` and ``description`` are derived text, shown only to a principal who can see every
    document supporting the node. The keys of ``name`` and ``aliases`` and the ``node_type``
    this declaration introduces are matched and shown only through it: when one of its
    supporting chunks is visible and, unless it only mentions the node, none is hidden
    (:mod:`graphctx.store.declarations`).

    Added for the graph layer (all optional): ``node_type`` is the open sub-type (``Service``,
    ``System``, ``Person``, ``Article``; a Concept's ``procedure``/``calculation``/...);
    ``aliases`` are extra names for entity lookup; ``support_link`` says how the supporting
    chunks relate to the node (:data:`SUPPORTS`, :data:`MENTIONS`, :data:`PART_OF`, ...);
    ``support_roles`` gives a role per supporting chunk (``(chunk_id, role)``, e.g. a
    PART_OF role such as "요건").
    """

    node_id: str
    kind: NodeKind
    name: str
    supporting_chunk_ids: tuple[str, ...]
    description: str | None = None
    node_type: str | None = None
    aliases: tuple[str, ...] = ()
    support_link: str = "SUPPORTS"
    support_roles: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Relation:
    """A typed relation between two knowledge nodes, with the chunks that support it."""

    source_id: str
    target_id: str
    relation_type: str
    supporting_chunk_ids: tuple[str, ...]


# --- graph layer: expansion, entity lookup, derived text ----------------------------------

SUPPORTS = "SUPPORTS"  # the chunk states or describes the node (its home)
MENTIONS = "MENTIONS"  # the chunk mentions the node (ranked after SUPPORTS when expanding)
PART_OF = "PART_OF"  # the chunk is a member of a Concept (seed 001: Article -PART_OF-> Concept)
STATES = "STATES"  # the chunk states a relation (relation support, in neighbourhood paths)
REVERSE = "<-"  # prefix of ``PathStep.via`` when an edge was walked against its direction


class Direction(StrEnum):
    """Which way typed relations are walked: along, against, or both."""

    OUT = "out"
    IN = "in"
    BOTH = "both"


@dataclass(frozen=True)
class ExpansionPolicy:
    """Bounds and shape of one graph expansion; every bound holds per request.

    A *hop* moves from one chunk to another through knowledge nodes: chunk -> node ->
    chunk (a shared Concept/Entity) or chunk -> node -[RELATION]-> node -> chunk (one typed
    relation). Two hops repeat that from the chunks reached by the first.
    """

    max_hops: int = 1  # 0: no expansion from anchors
    max_fanout: int = 8  # nodes per chunk, relations per node and chunks per node, per hop
    max_nodes: int = 64  # distinct knowledge nodes visited in total
    max_results: int = 40  # reached chunks returned
    hop_decay: float = 0.6  # score multiplier per hop
    relation_types: frozenset[str] | None = None  # None: every type; empty: shared nodes only
    direction: Direction = Direction.BOTH
    via_shared_nodes: bool = True  # chunk -> node -> chunk without a relation
    max_node_support: int = 400  # a node supported by more chunks is a hub: not traversed
    include_same_document: bool = False  # reach other chunks of an anchor's own document
    mention_weight: float = 0.5  # score factor for a chunk that only MENTIONS the node
    # Relation types never walked against their direction.
    forward_only: frozenset[str] = frozenset()
    # Relation types whose reverse is weaker than their direction: a citation says the citing
    # text needs the cited one; the reverse (what cites this, often a penalty clause or an
    # exception) is still relevant, with this factor on the score.
    reverse_weight: float = 0.5
    # A node's score is divided by (visible chunks it leads to) ** degree_exponent.
    degree_exponent: float = 0.5
    directed_types: frozenset[str] = frozenset({"REFERENCES"})

    def __post_init__(self) -> None:
        if not 0 <= self.max_hops <= 3:
            raise ValueError("max_hops must be between 0 and 3")
        if min(self.max_fanout, self.max_nodes, self.max_results, self.max_node_support) < 1:
            raise ValueError("fan-out, node, result and support bounds must be positive")
        weights = (self.hop_decay, self.mention_weight, self.reverse_weight)
        if not all(0.0 < w <= 1.0 for w in weights):
            raise ValueError("hop_decay, mention_weight and reverse_weight must be in (0, 1]")
        if not 0.0 <= self.degree_exponent <= 1.0:
            raise ValueError("degree_exponent must be in [0, 1]")


@dataclass(frozen=True)
class PathStep:
    """One step of an expansion path; ``via`` is the edge used to arrive at it."""

    kind: NodeKind
    id: str
    via: str | None = None


@dataclass(frozen=True)
class Expansion:
    """A chunk reached through the graph, how far, how well, and by which path.

    ``path`` starts at the anchor chunk (or the seed node of a neighbourhood) and ends at
    ``chunk_id``. ``score`` is the sum, over the origins that reach the chunk, of the
    origin's score times the decays of its best path (``hop_decay`` per hop, the mention and
    reverse-relation factors); ``path`` and ``hops`` are those of the best single path.
    """

    chunk_id: str
    hops: int
    score: float
    path: tuple[PathStep, ...]
    origins: int = 1  # distinct anchors (or the seed set) whose paths reach the chunk


@dataclass(frozen=True)
class ExpansionResult:
    """Reached chunks, best first, and how many paths were withheld (never which)."""

    expansions: tuple[Expansion, ...]
    withheld: int = 0
    nodes_visited: int = 0


@dataclass(frozen=True)
class EntityMatch:
    """A visible knowledge node whose name or alias equals a lookup key."""

    node_id: str
    kind: NodeKind
    node_type: str | None
    key: str
    # Visible typed relations with a visible other end, plus visible MENTIONS links from
    # chunks (a chunk -MENTIONS-> entity edge), capped at 100.
    relation_count: int


@dataclass(frozen=True)
class NodeText:
    """A visible node's derived text; ``None`` unless every supporting document is visible."""

    node_id: str
    kind: NodeKind
    node_type: str | None
    name: str | None
    description: str | None
