"""Concepts formed offline (no model) from what a corpus already says, in seed 001's shape.

Three sources of candidates, over the items of :mod:`~graphctx.ingest.extract.items`:

- **terms**: a defined term (:mod:`~graphctx.ingest.extract.terms`) with its defining item
  (role 정의 / definition) and the items that use it (opt-in: English capitalised
  multi-word terms shared by several items, with no definer). A term used by more items than a
  concept may hold (``근로자`` in 88 articles) is too general to group anything: skipped.
- **references**: items of the same top-level structure (one chapter; the whole collection
  when there is none) that cite each other, as connected groups of three or more once the
  hubs are left out (an item citing or cited by more items than a concept may hold, e.g. a
  penalty article citing 23 others). A single citation is already a REFERENCES relation.
- **structure**: the items under one parent (a 절 / 관, a Markdown section's siblings). A
  parent holding more than ``max_members`` items (a 장 of 28 articles) is cut into runs of
  consecutive items, choosing the cuts that keep similar neighbours together: the pairs a
  run creates cost ``PAIR_COST`` each and earn their similarity (shared title words,
  citations, shared defined terms). Items whose structure is unknown get no structural
  concept, so an unstructured collection is never grouped by its storage order.

Why not one concept per chapter: such a concept gives every anchor up to a whole chapter of
equally strong neighbours (the chapter-concept run of ``graphctx eval`` averaged 16 graph
neighbours per question instead of 2.5 and pushed gold articles out of the top 5), so
concepts here hold at most ``max_members`` items.

Selection keeps at most n/5 concepts (n = items; seed 001 asks for n/10 .. n/5): duplicates
(same members) merge, then concepts are taken by what they add — items not yet in a concept
and member pairs not yet grouped — terms before references before structure on ties. The shape —
count against n, members per concept, overlap, fallback rate — is reported with them.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from graphctx.ingest.extract.concept_shape import ConceptShape, concept_bounds
from graphctx.ingest.extract.concept_types import concept_type
from graphctx.ingest.extract.items import ConceptItem
from graphctx.ingest.extract.terms import (
    DefinedTerm,
    capitalised_terms,
    find_definitions,
    term_users,
)

__all__ = [
    "MAX_MEMBERS",
    "ConceptShape",
    "ConceptSource",
    "FormedConcept",
    "concept_bounds",
    "form_concepts",
]

# Seed 001's LLM concepts held 971 memberships in 117 concepts (8.3 per concept); a concept
# may hold at most this many items. Chosen a priori from the seed, then checked on 근로기준법.
MAX_MEMBERS: Final = 8
MIN_MEMBERS: Final = 2
# English capitalised multi-word terms as terms: off by default. On HotpotQA train100 they
# made 199 two-to-eight-passage concepts (half the passages in one) and cost hybrid+graph
# 5 points of R@5 (91.0 -> 86.0) under the per-anchor graph vote; Wikipedia's shared names
# are entities, which title mentions already link.
CAPITALISED_TERMS: Final = False
MIN_REFERENCE_CLUSTER: Final = 3
PAIR_COST: Final = 0.25  # a co-membership must earn at least this similarity to pay off
REFERENCE_SIMILARITY: Final = 1.0  # one item cites the other
TERM_SIMILARITY: Final = 0.5  # per specific defined term both use (at most two count)
_HANGUL: Final = re.compile(r"[가-힣]")
_TOKEN: Final = re.compile(r"[0-9A-Za-z가-힣]+")


class ConceptSource(StrEnum):
    TERM = "term"
    REFERENCES = "references"
    STRUCTURE = "structure"


_PRIORITY: Final = {ConceptSource.TERM: 0, ConceptSource.REFERENCES: 1, ConceptSource.STRUCTURE: 2}


@dataclass(frozen=True)
class FormedConcept:
    concept_id: str
    name: str
    source: ConceptSource
    concept_type: str | None  # procedure|calculation|right|obligation|definition|penalty
    members: tuple[str, ...]  # item keys, in item order
    roles: tuple[str | None, ...]  # per member
    description: str


def _korean(items: Sequence[ConceptItem]) -> bool:
    return any(_HANGUL.search(item.title or item.text[:200]) for item in items)


def _concept_id(source: ConceptSource, collection: str, members: Sequence[str]) -> str:
    digest = hashlib.sha256("\x00".join([source.value, collection, *members]).encode())
    return f"concept:offline:{source.value}:{digest.hexdigest()[:12]}"


def _bigrams(text: str) -> frozenset[str]:
    grams: set[str] = set()
    for token in _TOKEN.findall(text.casefold()):
        if len(token) == 1:
            continue
        grams.update(token[i : i + 2] for i in range(len(token) - 1))
    return frozenset(grams)


def _dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


class _Signals:
    """Pairwise similarity of items: shared title words, citations, shared defined terms."""

    def __init__(
        self,
        items: Sequence[ConceptItem],
        links: Mapping[str, frozenset[str]],
        uses: Mapping[str, frozenset[str]],
    ) -> None:
        self.grams = {i.key: _bigrams(i.title or i.text.partition("\n")[0][:120]) for i in items}
        self.links = links
        self.uses = uses

    def similarity(self, a: str, b: str) -> float:
        score = _dice(self.grams[a], self.grams[b])
        if b in self.links.get(a, frozenset()) or a in self.links.get(b, frozenset()):
            score += REFERENCE_SIMILARITY
        shared = len(self.uses.get(a, frozenset()) & self.uses.get(b, frozenset()))
        return score + TERM_SIMILARITY * min(2, shared)


def _runs(keys: Sequence[str], signals: _Signals, max_members: int) -> list[tuple[int, int]]:
    """Cut ``keys`` into consecutive runs of at most ``max_members``, minimising the summed
    ``PAIR_COST - similarity`` over the pairs each run creates (dynamic programming)."""
    n = len(keys)
    best = [0.0] + [math.inf] * n
    cut = [0] * (n + 1)
    for end in range(1, n + 1):
        cost = 0.0
        for start in range(end - 1, max(-1, end - 1 - max_members), -1):
            # adding keys[start] to the run keys[start+1:end]
            cost += sum(
                PAIR_COST - signals.similarity(keys[start], keys[other])
                for other in range(start + 1, end)
            )
            total = best[start] + cost
            if total < best[end] - 1e-12:
                best[end], cut[end] = total, start
    runs = []
    end = n
    while end > 0:
        runs.append((cut[end], end))
        end = cut[end]
    return _attach_single(runs[::-1], keys, signals, max_members)


def _attach_single(
    runs: list[tuple[int, int]], keys: Sequence[str], signals: _Signals, max_members: int
) -> list[tuple[int, int]]:
    """A run of one item joins the neighbouring run it is most similar to (on average, and
    above nothing), when that run has room: fewer items are left without a concept."""
    merged = list(runs)
    index = 0
    while index < len(merged):
        start, end = merged[index]
        if end - start != 1 or len(merged) == 1:
            index += 1
            continue
        options = []
        for side in (index - 1, index + 1):
            if 0 <= side < len(merged):
                low, high = merged[side]
                if high - low < max_members:
                    mean = sum(signals.similarity(keys[start], keys[k]) for k in range(low, high))
                    options.append((mean / (high - low), -side, side))
        best = max(options, default=None)
        if best is None or best[0] <= 0.0:
            index += 1
            continue
        side = best[2]
        low, high = merged[side]
        merged[min(side, index)] = (min(low, start), max(high, end))
        del merged[max(side, index)]
        index = min(side, index) + 1
    return merged


@dataclass
class _Candidate:
    source: ConceptSource
    members: list[str]
    roles: dict[str, str]
    name: str
    collection: str
    definer: str | None = None


def _term_candidates(
    items: Sequence[ConceptItem],
    users: Mapping[DefinedTerm, list[str]],
    max_members: int,
    korean: bool,
) -> tuple[list[_Candidate], int]:
    found, general = [], 0
    order = {item.key: n for n, item in enumerate(items)}
    for term, using in users.items():
        members = sorted({term.definer, *using} - {""}, key=order.__getitem__)
        if len(members) < MIN_MEMBERS:
            continue
        if len(members) > max_members:
            general += 1
            continue
        roles = {key: "용어 사용" if korean else "uses the term" for key in using}
        if term.definer:
            roles[term.definer] = "정의" if korean else "definition"
        suffix = ("(정의)" if korean else "(defined term)") if term.definer else "(term)"
        found.append(
            _Candidate(ConceptSource.TERM, members, roles, f"“{term.term}” {suffix}",
                       term.collection, term.definer)
        )  # fmt: skip
    return found, general


def _groups_by(items: Sequence[ConceptItem], depth: int | None) -> dict[tuple[str, ...], list[str]]:
    groups: dict[tuple[str, ...], list[str]] = {}
    for item in items:
        if depth is not None:
            key = (item.collection, *item.parent[:depth])
        elif item.parent:
            key = (item.collection, *item.parent)
        else:
            continue
        groups.setdefault(key, []).append(item.key)
    return groups


def _reference_candidates(
    items: Sequence[ConceptItem],
    links: Mapping[str, frozenset[str]],
    max_members: int,
    korean: bool,
) -> list[_Candidate]:
    by_key = {item.key: item for item in items}
    hubs = {key for key, near in links.items() if len(near) > max_members}
    found = []
    for (collection, *_), keys in _groups_by(items, 1).items():
        inside = set(keys) - hubs
        seen: set[str] = set()
        for start in keys:
            if start in seen or start not in inside:
                continue
            component, stack = [], [start]
            seen.add(start)
            while stack:
                key = stack.pop()
                component.append(key)
                for near in sorted((links.get(key, frozenset()) & inside) - seen):
                    seen.add(near)
                    stack.append(near)
            if MIN_REFERENCE_CLUSTER <= len(component) <= max_members:
                in_component = set(component)
                members = [k for k in keys if k in in_component]
                label = by_key[members[0]].label
                suffix = "(상호 인용)" if korean else "(cross-references)"
                found.append(
                    _Candidate(ConceptSource.REFERENCES, members, {},
                               f"{label} 외 {len(members) - 1}" if korean
                               else f"{label} and {len(members) - 1} more", collection)
                )  # fmt: skip
                found[-1].name += f" {suffix}"
    return found


def _structure_candidates(
    items: Sequence[ConceptItem], signals: _Signals, max_members: int
) -> list[_Candidate]:
    by_key = {item.key: item for item in items}
    found = []
    for (collection, *parent), keys in _groups_by(items, None).items():
        runs = [(0, len(keys))] if len(keys) <= max_members else _runs(keys, signals, max_members)
        for start, end in runs:
            members = keys[start:end]
            if len(members) < MIN_MEMBERS:
                continue
            heading = parent[-1]
            if len(runs) > 1:
                first, last = by_key[members[0]], by_key[members[-1]]
                heading = f"{heading}: {first.label} … {last.label}"
            found.append(_Candidate(ConceptSource.STRUCTURE, members, {}, heading, collection))
    return found


def _select(candidates: list[_Candidate], n: int) -> list[_Candidate]:
    """Merge duplicates, then keep at most n/5 concepts, greedily by what each adds: the
    items it brings into a concept for the first time, plus its new member pairs per member
    (a concept repeating pairs already grouped adds nothing and is left out). Ties go to
    explicit evidence (a definition, then citations) over structure, then the smaller.

    (Taking every term and citation concept first was tried on 근로기준법: more overlap, but
    fewer gold article pairs sharing a concept, 45% against 57%, and more co-members.)"""
    unique: dict[tuple[str, tuple[str, ...]], _Candidate] = {}
    for candidate in sorted(candidates, key=lambda c: _PRIORITY[c.source]):
        unique.setdefault((candidate.collection, tuple(candidate.members)), candidate)
    pool = list(unique.values())
    _, high = concept_bounds(n)
    chosen: list[_Candidate] = []
    covered: set[str] = set()
    paired: set[tuple[str, str]] = set()

    def gain(candidate: _Candidate) -> float:
        members = candidate.members
        pairs = {(a, b) for i, a in enumerate(members) for b in members[i + 1 :]}
        return len(set(members) - covered) + len(pairs - paired) / (len(members) - 1)

    # Lazy greedy: a gain only shrinks as concepts are chosen, so a candidate whose stale
    # gain is still the best is re-scored and taken if it stays ahead (same choice as a
    # full re-scan, in a fraction of the time on large collections).
    heap = [(-gain(c), _PRIORITY[c.source], len(c.members), i) for i, c in enumerate(pool)]
    heapq.heapify(heap)
    while heap and len(chosen) < high:
        _, priority, size, index = heapq.heappop(heap)
        fresh = gain(pool[index])
        if fresh <= 0.0:
            continue
        if heap and (-fresh, priority, size, index) > heap[0]:
            heapq.heappush(heap, (-fresh, priority, size, index))
            continue
        candidate = pool[index]
        chosen.append(candidate)
        covered.update(candidate.members)
        members = candidate.members
        paired.update((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
    return chosen


def form_concepts(
    items: Sequence[ConceptItem],
    links: Mapping[str, frozenset[str]],
    *,
    max_members: int = MAX_MEMBERS,
    capitalised: bool = CAPITALISED_TERMS,
) -> tuple[list[FormedConcept], ConceptShape]:
    """Concepts over ``items`` (``links``: item key -> the item keys it cites or is cited by)."""
    if max_members < MIN_MEMBERS:
        raise ValueError(f"max_members must be at least {MIN_MEMBERS}")
    by_key = {item.key: item for item in items}
    keyed = [(item.key, item.collection, f"{item.title}\n{item.text}") for item in items]
    users = term_users(find_definitions(keyed), keyed)
    korean = _korean(items)
    if capitalised and not korean:
        titles = frozenset(item.title for item in items if item.title)
        users.update(capitalised_terms(keyed, titles))
    term_found, general = _term_candidates(items, users, max_members, korean)
    uses: dict[str, set[str]] = {}
    for term, using in users.items():
        if len({term.definer, *using} - {""}) <= max_members:
            for key in {term.definer, *using} - {""}:
                uses.setdefault(key, set()).add(term.term)
    signals = _Signals(items, links, {k: frozenset(v) for k, v in uses.items()})
    candidates = [
        *term_found,
        *_reference_candidates(items, links, max_members, korean),
        *_structure_candidates(items, signals, max_members),
    ]
    chosen = _select(candidates, len(items))
    order = {item.key: n for n, item in enumerate(items)}
    chosen.sort(key=lambda c: (order[c.members[0]], _PRIORITY[c.source], c.name))
    formed = []
    for candidate in chosen:
        members = tuple(candidate.members)
        member_items = [by_key[key] for key in members]
        formed.append(
            FormedConcept(
                _concept_id(candidate.source, candidate.collection, members),
                candidate.name,
                candidate.source,
                "definition"
                if candidate.source is ConceptSource.TERM
                else concept_type(member_items),
                members,
                tuple(candidate.roles.get(key) for key in members),
                "; ".join(item.label for item in member_items),
            )
        )
    return formed, _shape(formed, len(items), len(candidates), general)


def _shape(formed: Sequence[FormedConcept], n: int, candidates: int, general: int) -> ConceptShape:
    low, high = concept_bounds(n)
    sizes = [len(c.members) for c in formed]
    membership: dict[str, int] = {}
    for concept in formed:
        for key in concept.members:
            membership[key] = membership.get(key, 0) + 1
    by_source: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for concept in formed:
        by_source[concept.source.value] = by_source.get(concept.source.value, 0) + 1
        kind = concept.concept_type or "untyped"
        by_type[kind] = by_type.get(kind, 0) + 1
    return ConceptShape(
        items=n,
        concepts=len(formed),
        low=low,
        high=high,
        candidates=candidates,
        by_source=by_source,
        by_type=by_type,
        members_min=min(sizes, default=0),
        members_median=statistics.median(sizes) if sizes else 0.0,
        members_max=max(sizes, default=0),
        memberships=sum(sizes),
        in_several=sum(1 for count in membership.values() if count >= 2),
        general_terms=general,
        fallback_rate=round(1 - len(membership) / n, 4) if n else None,
    )
