"""Optional LLM concept extraction over a whole collection (seed 001).

The model sees the collection at once (id, title and text of every item; title and the first
``SUMMARY_CHARS`` characters above ``SUMMARY_THRESHOLD`` items) and groups the items into
Concepts "a layperson must know together": between n/10 and n/5 concepts, overlapping
membership encouraged, a role on every PART_OF, plus direct relations between items
(NEXT_STEP, REQUIRES, CALCULATION_INPUT, LIMITS, EXCEPTION_OF). Collections above
``SPLIT_THRESHOLD`` items are split (by a metadata field when given) and asked part by part.

Every answer is validated before anything is written: JSON shape, concept types, ids that
exist, the concept count. A malformed answer is sent back with the problems and retried a
bounded number of times; a part that still fails is reported and the run's draft is empty:
nothing from it is written. Concept ids are namespaced per collection
(``concept:<collection>:<part>.<n>``); concepts left with fewer than two valid members are
dropped as orphans. The report carries the fallback rate: the share of items that ended up in
no concept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from graphctx.contract import NodeKind
from graphctx.ingest.extract.concept_shape import concept_bounds
from graphctx.ingest.extract.offline import document_node_id
from graphctx.ingest.extract.port import ExtractionInput, ExtractionReport, GraphDraft
from graphctx.llm.port import ChatClient, ChatMessage
from graphctx.store.records import PART_OF, SUPPORTS, KnowledgeNode, Relation

__all__ = [
    "CONCEPT_TYPES",
    "ITEM_RELATIONS",
    "ConceptPlan",
    "LlmConceptExtractor",
    "concept_bounds",
]

SUMMARY_THRESHOLD: Final = 150
SPLIT_THRESHOLD: Final = 1000
SUMMARY_CHARS: Final = 200
MAX_ITEM_CHARS: Final = 1500
DEFAULT_RETRIES: Final = 2
CONCEPT_TYPES: Final = frozenset(
    {"procedure", "calculation", "right", "obligation", "definition", "penalty"}
)
ITEM_RELATIONS: Final = frozenset(
    {"NEXT_STEP", "REQUIRES", "CALCULATION_INPUT", "LIMITS", "EXCEPTION_OF"}
)
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")

SYSTEM_PROMPT: Final = """You organise a collection of items (for example the articles of a \
law) into concepts for a knowledge graph.
Rules:
- Group the items a layperson must know together (일반인의 관점에서 함께 알아야 하는 항목을 묶어라).
- Make between {low} and {high} concepts for these {n} items.
- Assign items to several concepts whenever they belong there; overlap is wanted.
- Give every membership a short role (e.g. 요건, 기간, 효과, 절차, 예외, 정의).
- Concept type is one of: procedure, calculation, right, obligation, definition, penalty.
- Also list direct relations between items: NEXT_STEP, REQUIRES, CALCULATION_INPUT, LIMITS,
  EXCEPTION_OF.
- Use only the item ids given. Answer with JSON only, no prose:
{{"concepts": [{{"name": "...", "type": "procedure", "description": "...",
  "members": [{{"item": "<id>", "role": "..."}}]}}],
 "relations": [{{"source": "<id>", "type": "REQUIRES", "target": "<id>"}}]}}"""


@dataclass(frozen=True)
class PlannedConcept:
    name: str
    concept_type: str
    description: str | None
    members: tuple[tuple[str, str | None], ...]  # (item id, role)


@dataclass(frozen=True)
class ConceptPlan:
    """A validated answer for one part of the collection."""

    concepts: tuple[PlannedConcept, ...]
    relations: tuple[tuple[str, str, str], ...]  # (source item, type, target item)


def validate_answer(text: str, item_ids: set[str], n: int) -> tuple[ConceptPlan | None, list[str]]:
    """The plan in ``text`` or the problems that make it unusable."""
    try:
        data = json.loads(_FENCE.sub("", text))
    except ValueError as exc:
        return None, [f"not valid JSON: {exc}"]
    if not isinstance(data, dict) or not isinstance(data.get("concepts"), list):
        return None, ['the answer must be an object with a "concepts" list']
    problems: list[str] = []
    concepts: list[PlannedConcept] = []
    for number, raw in enumerate(data["concepts"]):
        concept = _concept(raw, number, item_ids, problems)
        if concept is not None:
            concepts.append(concept)
    relations = []
    for number, raw in enumerate(data.get("relations") or []):
        if not isinstance(raw, dict):
            problems.append(f"relations[{number}] is not an object")
            continue
        source, rtype, target = raw.get("source"), raw.get("type"), raw.get("target")
        if rtype not in ITEM_RELATIONS:
            problems.append(
                f"relations[{number}]: type {rtype!r} is not one of {sorted(ITEM_RELATIONS)}"
            )
        elif source not in item_ids or target not in item_ids:
            problems.append(f"relations[{number}]: unknown item id {source!r} or {target!r}")
        elif source != target:
            relations.append((str(source), str(rtype), str(target)))
    low, high = concept_bounds(n)
    if not low <= len(concepts) <= high:
        problems.append(f"{len(concepts)} concepts; make between {low} and {high}")
    if problems:
        return None, problems
    return ConceptPlan(tuple(concepts), tuple(relations)), []


def _concept(
    raw: Any, number: int, item_ids: set[str], problems: list[str]
) -> PlannedConcept | None:
    where = f"concepts[{number}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        problems.append(f"{where} needs a name")
        return None
    if raw.get("type") not in CONCEPT_TYPES:
        problems.append(f"{where}: type {raw.get('type')!r} is not one of {sorted(CONCEPT_TYPES)}")
        return None
    members = []
    for member in raw.get("members") or []:
        item = member.get("item") if isinstance(member, dict) else member
        if item not in item_ids:
            problems.append(f"{where}: unknown item id {item!r}")
            continue
        role = member.get("role") if isinstance(member, dict) else None
        members.append((str(item), None if role is None else str(role)))
    description = raw.get("description")
    return PlannedConcept(
        raw["name"], raw["type"], None if description is None else str(description), tuple(members)
    )


class LlmConceptExtractor:
    """A :class:`~graphctx.ingest.extract.port.GraphExtractor` asking a chat model for concepts."""

    def __init__(
        self,
        chat: ChatClient,
        collection: str,
        *,
        retries: int = DEFAULT_RETRIES,
        split_by: str | None = None,
        summary_threshold: int = SUMMARY_THRESHOLD,
        split_threshold: int = SPLIT_THRESHOLD,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z0-9가-힣_.-]{1,64}", collection):
            raise ValueError("collection must be a short id (letters, digits, _ . -)")
        self.chat = chat
        self.collection = collection
        self.retries = retries
        self.split_by = split_by
        self.summary_threshold = summary_threshold
        self.split_threshold = split_threshold

    def parts(self, documents: Sequence[ExtractionInput]) -> list[list[ExtractionInput]]:
        """The collection, split above ``split_threshold`` items (by ``split_by`` first)."""
        if len(documents) <= self.split_threshold:
            return [list(documents)]
        groups: dict[str, list[ExtractionInput]] = {}
        for doc in documents:
            key = doc.metadata.get(self.split_by, "") if self.split_by else ""
            groups.setdefault(key, []).append(doc)
        parts: list[list[ExtractionInput]] = []
        for group in groups.values():
            for start in range(0, len(group), self.split_threshold):
                parts.append(group[start : start + self.split_threshold])
        return parts

    def prompt(self, part: Sequence[ExtractionInput]) -> list[ChatMessage]:
        low, high = concept_bounds(len(part))
        summary = len(part) > self.summary_threshold
        lines = []
        for doc in part:
            text = " ".join(" ".join(t for _, t in doc.chunks).split())
            limit = SUMMARY_CHARS if summary else MAX_ITEM_CHARS
            lines.append(
                json.dumps(
                    {"id": doc.document_id, "title": doc.title or "", "text": text[:limit]},
                    ensure_ascii=False,
                )
            )
        return [
            ChatMessage("system", SYSTEM_PROMPT.format(low=low, high=high, n=len(part))),
            ChatMessage("user", "Items (JSON lines):\n" + "\n".join(lines)),
        ]

    def ask(self, part: Sequence[ExtractionInput]) -> tuple[ConceptPlan | None, list[str]]:
        """Ask, validate, and re-ask with the problems, at most ``retries`` more times."""
        messages = self.prompt(part)
        item_ids = {doc.document_id for doc in part}
        problems: list[str] = []
        for _ in range(self.retries + 1):
            answer = self.chat.complete(messages)
            plan, problems = validate_answer(answer, item_ids, len(part))
            if plan is not None:
                return plan, []
            messages = [
                *messages,
                ChatMessage("assistant", answer[:4000]),
                ChatMessage(
                    "user",
                    "That answer cannot be used: " + "; ".join(problems[:10]) + ". Answer again"
                    " with JSON only, following every rule.",
                ),
            ]
        return None, problems

    def extract(self, documents: Sequence[ExtractionInput]) -> GraphDraft:
        """Ask for every part; one part without a usable answer makes the draft empty."""
        report = ExtractionReport(documents=len(documents))
        plans: list[tuple[int, ConceptPlan]] = []
        for index, part in enumerate(self.parts(documents)):
            plan, problems = self.ask(part)
            if plan is None:
                report.details.append(
                    f"part {index + 1}: no usable answer after {self.retries + 1} attempts: "
                    + "; ".join(problems[:5])
                )
                report.details.append("nothing was written")
                return GraphDraft((), (), report)
            plans.append((index, plan))
        nodes, relations = self.graph(documents, plans, report)
        return GraphDraft(tuple(nodes), tuple(relations), report)

    def graph(
        self,
        documents: Sequence[ExtractionInput],
        plans: Sequence[tuple[int, ConceptPlan]],
        report: ExtractionReport,
    ) -> tuple[list[KnowledgeNode], list[Relation]]:
        by_id = {doc.document_id: doc for doc in documents}
        nodes = [
            KnowledgeNode(
                document_node_id(doc),
                NodeKind.ENTITY,
                doc.title or doc.document_id,
                tuple(cid for cid, _ in doc.chunks),
                node_type="Article" if doc.metadata.get("article_no") else "Document",
                support_link=SUPPORTS,
            )
            for doc in documents
            if doc.chunks
        ]
        covered: set[str] = set()
        orphans = 0
        for part, plan in plans:
            for number, concept in enumerate(plan.concepts, start=1):
                members = [
                    (item, role)
                    for item, role in dict(concept.members).items()
                    if by_id[item].chunks
                ]
                if len({item for item, _ in members}) < 2:
                    orphans += 1
                    continue
                covered.update(item for item, _ in members)
                chunk_roles = [
                    (cid, role) for item, role in members for cid, _ in by_id[item].chunks
                ]
                nodes.append(
                    KnowledgeNode(
                        f"concept:{self.collection}:{part + 1}.{number}",
                        NodeKind.CONCEPT,
                        concept.name,
                        tuple(cid for cid, _ in chunk_roles),
                        description=concept.description,
                        node_type=concept.concept_type,
                        support_link=PART_OF,
                        support_roles=tuple((cid, role) for cid, role in chunk_roles if role),
                    )
                )
        relations = []
        for _, plan in plans:
            for source, rtype, target in plan.relations:
                support = tuple(cid for cid, _ in by_id[source].chunks)
                if support:
                    relations.append(
                        Relation(
                            document_node_id(by_id[source]),
                            document_node_id(by_id[target]),
                            rtype,
                            support,
                        )
                    )
        report.concepts = sum(1 for n in nodes if n.kind is NodeKind.CONCEPT)
        report.references = len(relations)
        report.document_nodes = len(documents)
        report.fallback_rate = round(1 - len(covered) / len(documents), 4) if documents else None
        if orphans:
            report.details.append(f"{orphans} concept(s) with fewer than two members dropped")
        return nodes, relations
