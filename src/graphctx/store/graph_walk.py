"""The backend-independent graph walk behind ``expand`` and ``neighbourhood``.

Pure logic, no I/O: a walk is a generator that yields :data:`Query` objects ("which visible
neighbours do these chunks/nodes have?") and reads the rows an adapter fills in before resuming
it. Bounds, tie-breaks, scoring, path bookkeeping and ``withheld`` accounting all live here, so
every backend traverses the same way; an adapter only answers the queries, checking visibility
inside its own store, and drives the walk with :func:`run` (sync) or :func:`run_async`.

A *reach* is how a node or chunk was arrived at: score, hops, path and the anchor chunk the path
started from. A node keeps its best reach per origin anchor, so a chunk can be reached from any
anchor but its own. Chunks are identified by an integer ``row`` (insertion order in the
namespace) and relations by an integer id, so tie-breaks agree across backends.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from graphctx.contract import NodeKind
from graphctx.store.port import StageTimeout
from graphctx.store.records import (
    MENTIONS,
    REVERSE,
    STATES,
    Direction,
    Expansion,
    ExpansionPolicy,
    ExpansionResult,
    PathStep,
)

STATING_CHUNKS_PER_RELATION = 2


# --- rows an adapter answers with ----------------------------------------------------------
@dataclass(frozen=True)
class AnchorChunk:
    """A visible chunk among the anchors."""

    row: int
    chunk_id: str
    document_id: str


@dataclass(frozen=True)
class SeedNode:
    """A visible knowledge node among the neighbourhood seeds."""

    node_id: str
    kind: NodeKind


@dataclass(frozen=True)
class ChunkNode:
    """A node a chunk supports, whether or not visible; ``degree`` counts the node's supporting
    chunks (a count capped anywhere above ``max_node_support`` is enough). A visible chunk does
    not make a node visible: one that only mentions a node whose home chunks are hidden (a
    hidden document's own node) must not show it."""

    chunk_row: int
    node_id: str
    link: str
    role: str | None
    kind: NodeKind
    degree: int
    visible: bool


@dataclass(frozen=True)
class RelationEdge:
    """A relation from a ``near`` node, whether or not visible, with its ``far`` end's kind and
    degree; ``visible`` when the relation and the far node are both visible."""

    relation: int
    near: str
    far: str
    relation_type: str
    far_kind: NodeKind
    visible: bool
    far_degree: int


@dataclass(frozen=True)
class StatingChunk:
    """A visible chunk stating a relation."""

    relation: int
    row: int
    chunk_id: str


@dataclass(frozen=True)
class NodeChunk:
    """A chunk supporting a node, whether or not visible."""

    node_id: str
    row: int
    chunk_id: str
    document_id: str
    link: str
    role: str | None
    visible: bool


# --- queries a walk asks -------------------------------------------------------------------
@dataclass
class VisibleChunks:
    """The visible chunks among ``chunk_ids``, any order."""

    chunk_ids: tuple[str, ...]
    rows: list[AnchorChunk] = field(default_factory=list)


@dataclass
class VisibleNodes:
    """The visible knowledge nodes among ``node_ids``, any order."""

    node_ids: tuple[str, ...]
    rows: list[SeedNode] = field(default_factory=list)


@dataclass
class NodesOfChunks:
    """Every node supported by the chunks at ``chunk_rows``, any order."""

    chunk_rows: tuple[int, ...]
    rows: list[ChunkNode] = field(default_factory=list)


@dataclass
class Relations:
    """Relations at ``node_ids`` of the policy's types, walked out of the node (or into it when
    ``incoming``, skipping the policy's ``forward_only`` types), any order."""

    node_ids: tuple[str, ...]
    incoming: bool
    rows: list[RelationEdge] = field(default_factory=list)


@dataclass
class StatingChunks:
    """Visible chunks stating ``relations``, ordered by relation, latest document version
    first, then row."""

    relations: tuple[int, ...]
    rows: list[StatingChunk] = field(default_factory=list)


@dataclass
class ChunksOfNodes:
    """Every chunk supporting ``node_ids``, ordered by node, home links before MENTIONS,
    latest document version first, chunk ordinal, then row."""

    node_ids: tuple[str, ...]
    rows: list[NodeChunk] = field(default_factory=list)


Query = VisibleChunks | VisibleNodes | NodesOfChunks | Relations | StatingChunks | ChunksOfNodes
Steps = Generator[Query, None, ExpansionResult]
_Q = TypeVar("_Q", bound=Query)


# --- reaches -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Reach:
    score: float
    hops: int
    path: tuple[PathStep, ...]
    origin_row: int = -1  # the anchor chunk a path started from (never reached from itself)
    origin_document: str | None = None  # its document (skipped unless the policy allows)


def _better(new: _Reach, old: _Reach | None) -> bool:
    return old is None or (new.score, -new.hops) > (old.score, -old.hops)


_Reaches = dict[str, list[_Reach]]  # node id -> reaches, best first


@dataclass
class _Arrival:
    """A chunk's reaches, the best one per origin document. Its score is their sum: the walk
    propagates each anchor's score, and support from several anchor documents adds up (as
    personalized PageRank's mass does), while one document counts once however many of its
    chunks are anchors and however many paths lead from them."""

    chunk_id: str
    by_origin: dict[str | int, _Reach] = field(default_factory=dict)

    def offer(self, candidate: _Reach) -> None:
        origin = candidate.origin_document or candidate.origin_row
        if _better(candidate, self.by_origin.get(origin)):
            self.by_origin[origin] = candidate

    def best(self) -> _Reach:
        return max(self.by_origin.values(), key=lambda r: (r.score, -r.hops, -r.origin_row))

    def score(self) -> float:
        return combine_support(r.score for r in self.by_origin.values())


_Found = dict[int, _Arrival]  # chunk row -> its reaches


def combine_support(scores: Iterable[float]) -> float:
    """Independent support from several origins, each a score in [0, 1]: 1 - prod(1 - s).
    Two origins count for more than either, and no number of them passes 1, the weight of
    the best search hit, so a chunk only the graph reached never outranks it."""
    missing = 1.0
    for score in scores:
        missing *= 1.0 - min(1.0, max(0.0, score))
    return 1.0 - missing


def _offer(reaches: _Reaches, node: str, candidate: _Reach) -> None:
    """Keep ``candidate`` if it is the node's best reach from its origin anchor."""
    current = reaches.setdefault(node, [])
    for index, reach in enumerate(current):
        if reach.origin_row == candidate.origin_row:
            if _better(candidate, reach):
                current[index] = candidate
            break
    else:
        current.append(candidate)
    current.sort(key=lambda r: (-r.score, r.hops, r.origin_row))


def _arrive(reached: _Found, row: int, chunk_id: str, candidate: _Reach) -> None:
    reached.setdefault(row, _Arrival(chunk_id)).offer(candidate)


def _via(link: str, role: str | None) -> str:
    return f"{link}({role})" if role else link


def _best_first(frontier: Mapping[int, _Reach]) -> list[tuple[int, _Reach]]:
    return sorted(frontier.items(), key=lambda item: (-item[1].score, item[1].path[-1].id))


class _Walk:
    """One traversal's state: bounds, what was seen, what was withheld."""

    def __init__(self, policy: ExpansionPolicy, deadline: float) -> None:
        self.policy = policy
        self.deadline = deadline
        self.visited_nodes: set[str] = set()  # counted against max_nodes
        self.walked: set[str] = set()  # nodes whose relations were already walked
        self.withheld: set[tuple[str, int | str]] = set()

    def ask(self, query: _Q) -> Generator[Query, None, _Q]:
        if time.monotonic() > self.deadline:
            raise StageTimeout("graph expansion passed its deadline")
        yield query
        return query

    def room(self) -> bool:
        return len(self.visited_nodes) < self.policy.max_nodes

    # --- steps ----------------------------------------------------------------------------
    def nodes_of_chunks(self, frontier: Mapping[int, _Reach]) -> Generator[Query, None, _Reaches]:
        """chunk -> node: the nodes each frontier chunk supports (specific nodes first)."""
        query = yield from self.ask(NodesOfChunks(tuple(frontier)))
        by_chunk: dict[int, list[tuple[int, str, str, str | None, NodeKind]]] = {}
        for found in query.rows:
            if not found.visible:
                self.withheld.add(("node", found.node_id))
            elif found.degree <= self.policy.max_node_support:
                entry = (found.degree, found.node_id, found.link, found.role, found.kind)
                by_chunk.setdefault(found.chunk_row, []).append(entry)
        reached: _Reaches = {}
        for chunk, reach in _best_first(frontier):
            for _, node_id, link, role, kind in sorted(by_chunk.get(chunk, []))[
                : self.policy.max_fanout
            ]:
                if node_id not in reached and (node_id in self.walked or not self.room()):
                    continue
                step = PathStep(kind, node_id, _via(link, role))
                _offer(reached, node_id, replace(reach, path=(*reach.path, step)))
                self.visited_nodes.add(node_id)
        return reached

    def related(
        self, nodes: _Reaches, direction: Direction, *, between: bool = False
    ) -> Generator[Query, None, tuple[_Reaches, dict[int, list[_Reach]]]]:
        """node -[RELATION]- node: visible relations to visible nodes, per direction.

        Returns the newly reached nodes and, per walked relation, the reaches of its far end
        (for the chunks that state the relation). With ``between``, a relation from one
        frontier node to another is walked too (one anchor's article citing another
        anchor's), so the far node gains the near node's reaches from other origins: the
        graph confirms an anchor, as it confirms any chunk reached from several anchors.
        """
        self.walked.update(nodes)
        if self.policy.relation_types == frozenset() or not nodes:
            return {}, {}
        found: list[tuple[str, str, int, str, NodeKind, str]] = []
        walks = []
        if direction in (Direction.OUT, Direction.BOTH):
            walks.append((False, ""))
        if direction in (Direction.IN, Direction.BOTH):
            walks.append((True, REVERSE))
        for incoming, prefix in walks:
            query = yield from self.ask(Relations(tuple(nodes), incoming))
            for edge in query.rows:
                if not edge.visible:
                    self.withheld.add(("relation", edge.relation))
                    continue
                if edge.far_degree > self.policy.max_node_support:
                    continue
                found.append(
                    (edge.near, edge.relation_type, edge.relation, edge.far, edge.far_kind, prefix)
                )
        per_node: dict[str, int] = {}
        reached: _Reaches = {}
        via_relation: dict[int, list[_Reach]] = {}
        for near, rtype, rel, far, kind, prefix in sorted(found):
            if per_node.get(near, 0) >= self.policy.max_fanout:
                continue
            if far in nodes and not between:
                continue
            if (
                far not in reached
                and far not in nodes
                and (far in self.visited_nodes or not self.room())
            ):
                continue
            per_node[near] = per_node.get(near, 0) + 1
            step = PathStep(kind, far, prefix + rtype)
            factor = (
                self.policy.reverse_weight
                if prefix and rtype in self.policy.directed_types
                else 1.0
            )
            extended = [
                replace(r, score=r.score * factor, path=(*r.path, step)) for r in nodes[near]
            ]
            via_relation[rel] = extended
            for candidate in extended:
                _offer(reached, far, candidate)
            self.visited_nodes.add(far)
        return reached, via_relation

    def stating_chunks(
        self, via_relation: Mapping[int, list[_Reach]], factor: float, hops: int, seen: set[int]
    ) -> Generator[Query, None, _Found]:
        """relation -> chunk: up to two visible chunks stating each walked relation."""
        query = yield from self.ask(StatingChunks(tuple(sorted(via_relation))))
        taken: dict[int, int] = {}
        reached: _Found = {}
        for stating in query.rows:
            rel, row = stating.relation, stating.row
            origins = [r for r in via_relation[rel] if r.origin_row != row]
            if not origins or row in seen or taken.get(rel, 0) >= STATING_CHUNKS_PER_RELATION:
                continue
            taken[rel] = taken.get(rel, 0) + 1
            step = PathStep(NodeKind.CHUNK, stating.chunk_id, REVERSE + STATES)
            for origin in origins:
                candidate = replace(
                    origin, score=origin.score * factor, hops=hops, path=(*origin.path, step)
                )
                _arrive(reached, row, stating.chunk_id, candidate)
        return reached

    def chunks_of_nodes(
        self, nodes: _Reaches, factor: float, hops: int, seen: set[int]
    ) -> Generator[Query, None, _Found]:
        """node -> chunk: visible supporting chunks (home chunks before mentions), never the
        path's own anchor (nor, unless the policy allows it, the anchor's document)."""
        query = yield from self.ask(ChunksOfNodes(tuple(sorted(nodes))))
        same_document = self.policy.include_same_document
        taken: dict[str, int] = {}
        hidden: dict[str, int] = {}
        reached: _Found = {}
        arrivals: list[tuple[str, int, str, _Reach, float, PathStep]] = []
        for found in query.rows:
            node, row = found.node_id, found.row
            origins = [
                r
                for r in nodes[node]
                if r.origin_row != row and (same_document or r.origin_document != found.document_id)
            ]
            if not origins or row in seen:
                continue
            if not found.visible:
                if hidden.get(node, 0) < self.policy.max_fanout:
                    hidden[node] = hidden.get(node, 0) + 1
                    self.withheld.add(("chunk", row))
                continue
            if taken.get(node, 0) >= self.policy.max_fanout:
                continue
            taken[node] = taken.get(node, 0) + 1
            step = PathStep(NodeKind.CHUNK, found.chunk_id, REVERSE + _via(found.link, found.role))
            weight = self.policy.mention_weight if found.link == MENTIONS else 1.0
            arrivals.extend((node, row, found.chunk_id, origin, weight, step) for origin in origins)
        # A node's score is shared among the visible chunks it leads to (as PageRank splits
        # a node's mass among its edges), softened by ``degree_exponent``.
        for node, row, chunk_id, origin, weight, step in arrivals:
            share = taken[node] ** self.policy.degree_exponent
            candidate = replace(
                origin,
                score=origin.score * factor * weight / share,
                hops=hops,
                path=(*origin.path, step),
            )
            _arrive(reached, row, chunk_id, candidate)
        return reached

    def result(self, reached: _Found) -> ExpansionResult:
        ordered = sorted(
            (
                Expansion(a.chunk_id, a.best().hops, a.score(), a.best().path, len(a.by_origin))
                for a in reached.values()
            ),
            key=lambda e: (-e.score, e.hops, e.chunk_id),
        )
        return ExpansionResult(
            tuple(ordered[: self.policy.max_results]),
            withheld=len(self.withheld),
            nodes_visited=len(self.visited_nodes),
        )


# --- the two walks -------------------------------------------------------------------------
def expand(anchors: Mapping[str, float], policy: ExpansionPolicy, deadline: float) -> Steps:
    """Chunks reached from scored anchor chunks, hop by hop (see ``GraphStore.expand``)."""
    walk = _Walk(policy, deadline)
    if not anchors or policy.max_hops == 0:
        return walk.result({})
    start = yield from walk.ask(VisibleChunks(tuple(sorted(anchors))))
    frontier = {
        a.row: _Reach(
            anchors[a.chunk_id], 0, (PathStep(NodeKind.CHUNK, a.chunk_id),), a.row, a.document_id
        )
        for a in start.rows
    }
    anchor_rows = set(frontier)
    seen: set[int] = set()  # another anchor may be reached: the graph then confirms it
    reached: _Found = {}
    for hop in range(1, policy.max_hops + 1):
        if not frontier:
            break
        direct = yield from walk.nodes_of_chunks(frontier)
        related, _ = yield from walk.related(direct, policy.direction, between=True)
        nodes = {n: list(r) for n, r in direct.items()} if policy.via_shared_nodes else {}
        for node_id, reaches in related.items():
            for reach in reaches:
                _offer(nodes, node_id, reach)
        found = yield from walk.chunks_of_nodes(nodes, policy.hop_decay, hop, seen)
        reached.update(found)
        seen.update(found)
        fresh = [(row, a.best()) for row, a in found.items() if row not in anchor_rows]
        ranked = sorted(fresh, key=lambda item: (-item[1].score, item[0]))
        frontier = dict(ranked[: policy.max_fanout])
    return walk.result(reached)


def neighbourhood(node_ids: Sequence[str], policy: ExpansionPolicy, deadline: float) -> Steps:
    """Chunks around seed nodes and their related nodes (see ``GraphStore.neighbourhood``)."""
    walk = _Walk(policy, deadline)
    if not node_ids:
        return walk.result({})
    visible = yield from walk.ask(VisibleNodes(tuple(sorted(set(node_ids)))))
    seeds = {s.node_id: [_Reach(1.0, 0, (PathStep(s.kind, s.node_id),))] for s in visible.rows}
    walk.visited_nodes.update(seeds)
    seen: set[int] = set()
    reached = yield from walk.chunks_of_nodes(seeds, 1.0, 0, seen)
    seen.update(reached)
    current = seeds
    for hop in range(1, max(1, policy.max_hops) + 1):
        neighbours, via_relation = yield from walk.related(current, policy.direction)
        if not neighbours:
            break
        factor = policy.hop_decay**hop
        stating = yield from walk.stating_chunks(via_relation, factor, hop, seen)
        for row, arrival in stating.items():
            for reach in arrival.by_origin.values():
                _arrive(reached, row, arrival.chunk_id, reach)
        seen.update(stating)
        found = yield from walk.chunks_of_nodes(neighbours, factor, hop, seen)
        reached.update(found)
        seen.update(found)
        current = neighbours
    return walk.result(reached)


# --- drivers -------------------------------------------------------------------------------
def run(steps: Steps, answer: Callable[[Query], None]) -> ExpansionResult:
    """Drive a walk, answering each query in place (fills its ``rows``) before resuming."""
    while True:
        try:
            query = next(steps)
        except StopIteration as done:
            result: ExpansionResult = done.value
            return result
        answer(query)


async def run_async(steps: Steps, answer: Callable[[Query], Awaitable[None]]) -> ExpansionResult:
    """:func:`run` for an adapter whose answers are awaited."""
    while True:
        try:
            query = next(steps)
        except StopIteration as done:
            result: ExpansionResult = done.value
            return result
        await answer(query)
