"""Declared knowledge graphs: a YAML or JSONL file of nodes and typed relations.

The format is documented in ``docs/graph-format.md``. Every node and relation is tied to the
documents (optionally narrowed to the chunks quoting a passage) that support it, so it is
visible exactly to principals who can see one of those chunks. The whole file is validated
against the store (documents exist, quotes are found, relation ends are declared or already
known) before anything is written, and then written in one transaction: a file with a
problem writes nothing and every problem is reported. The store is read once, for the latest
chunks of the documents the file refers to; :func:`draft_declared_graph` builds the graph
from them without I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from graphctx.contract import NodeKind
from graphctx.errors import InvalidDocumentError
from graphctx.store.port import GraphStore
from graphctx.store.records import MENTIONS, PART_OF, SUPPORTS, KnowledgeNode, Relation

__all__ = [
    "GraphFileReport",
    "draft_declared_graph",
    "ingest_graph_file",
    "load_graph_file",
    "referenced_documents",
]

MAX_PROBLEMS_SHOWN: Final = 10
_TYPE_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_NODE_ID = re.compile(r"[^\s]{1,200}")
_KINDS: Final = {
    k.value.casefold(): k for k in NodeKind if k not in (NodeKind.DOCUMENT, NodeKind.CHUNK)
}


@dataclass(frozen=True)
class SupportRef:
    """A document (all chunks of its latest version) or the chunks quoting a passage."""

    document: str
    quote: str | None = None
    role: str | None = None


@dataclass(frozen=True)
class DeclaredNode:
    node_id: str
    kind: NodeKind
    name: str
    node_type: str | None
    description: str | None
    aliases: tuple[str, ...]
    support: tuple[SupportRef, ...]
    link: str
    members: tuple[SupportRef, ...]


@dataclass(frozen=True)
class DeclaredRelation:
    source: str
    target: str
    relation_type: str
    support: tuple[SupportRef, ...]


@dataclass(frozen=True)
class DeclaredGraph:
    nodes: tuple[DeclaredNode, ...]
    relations: tuple[DeclaredRelation, ...]


@dataclass
class GraphFileReport:
    path: str
    namespace: str
    nodes: int = 0
    relations: int = 0
    support_links: int = 0
    # Relations whose end is not declared in the file: kept, and walked once a node with
    # that id is written (by another file or an extractor) and visible.
    dangling: list[str] = field(default_factory=list)


def _fail(path: Path, problems: Sequence[str]) -> InvalidDocumentError:
    shown = "; ".join(problems[:MAX_PROBLEMS_SHOWN])
    more = (
        f" (+{len(problems) - MAX_PROBLEMS_SHOWN} more)"
        if len(problems) > MAX_PROBLEMS_SHOWN
        else ""
    )
    return InvalidDocumentError(
        f"{path}: graph file not written: {shown}{more}", path=str(path), code="graph_file_invalid"
    )


def _refs(raw: object, where: str, problems: list[str]) -> tuple[SupportRef, ...]:
    if raw is None:
        return ()
    items = raw if isinstance(raw, list) else [raw]
    refs: list[SupportRef] = []
    for item in items:
        if isinstance(item, str):
            refs.append(SupportRef(item))
        elif isinstance(item, Mapping) and isinstance(item.get("document"), str):
            quote, role = item.get("quote"), item.get("role")
            if quote is not None and not isinstance(quote, str):
                problems.append(f"{where}: quote must be text")
                continue
            refs.append(SupportRef(item["document"], quote, None if role is None else str(role)))
        else:
            problems.append(f"{where}: support entries are a document id or {{document, quote}}")
    return tuple(refs)


def _node(raw: Mapping[str, Any], where: str, problems: list[str]) -> DeclaredNode | None:
    node_id, name = raw.get("id"), raw.get("name")
    kind = _KINDS.get(str(raw.get("kind", "Entity")).casefold())
    if not isinstance(node_id, str) or not _NODE_ID.fullmatch(node_id):
        problems.append(f"{where}: id must be text without spaces")
        return None
    where = f"node {node_id}"
    if kind is None:
        problems.append(f"{where}: kind must be one of Entity, Concept, Claim, Evidence")
        return None
    aliases = raw.get("aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        problems.append(f"{where}: aliases must be a list of text")
        aliases = []
    link = str(raw.get("link", SUPPORTS)).upper()
    if not _TYPE_NAME.fullmatch(link):
        problems.append(f"{where}: link must be an upper-case name such as SUPPORTS")
    support = _refs(raw.get("support"), where, problems)
    members = _refs(raw.get("members"), where, problems)
    if not support and not members:
        problems.append(f"{where}: needs support or members (a node is visible only through them)")
    description = raw.get("description")
    node_type = raw.get("type")
    return DeclaredNode(
        node_id=node_id,
        kind=kind,
        name=str(name) if name is not None else node_id,
        node_type=None if node_type is None else str(node_type),
        description=None if description is None else str(description),
        aliases=tuple(aliases),
        support=support,
        link=link,
        members=members,
    )


def _relation(raw: Mapping[str, Any], where: str, problems: list[str]) -> DeclaredRelation | None:
    source, target, rtype = raw.get("source"), raw.get("target"), raw.get("type")
    if not (isinstance(source, str) and isinstance(target, str) and isinstance(rtype, str)):
        problems.append(f"{where}: a relation needs source, type and target")
        return None
    if not _TYPE_NAME.fullmatch(rtype):
        problems.append(f"{where}: type {rtype!r} must be upper-case, e.g. DEPENDS_ON")
        return None
    return DeclaredRelation(source, target, rtype, _refs(raw.get("support"), where, problems))


def load_graph_file(path: Path) -> DeclaredGraph:
    """Parse and check the file's shape (not yet against the store)."""
    graph, problems = _parse(path)
    if problems:
        raise _fail(path, problems)
    return graph


def _parse(path: Path) -> tuple[DeclaredGraph, list[str]]:
    """The well-formed part of the file, and every shape problem found."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidDocumentError(f"cannot read {path}: {exc}", path=str(path)) from exc
    problems: list[str] = []
    raw_nodes: list[tuple[str, Any]] = []
    raw_relations: list[tuple[str, Any]] = []
    try:
        if path.suffix.lower() == ".jsonl":
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                record = json.loads(line)
                target = (
                    raw_relations if isinstance(record, dict) and "source" in record else raw_nodes
                )
                target.append((f"line {number}", record))
        else:
            document = yaml.safe_load(text) or {}
            if not isinstance(document, dict):
                raise InvalidDocumentError(f"{path}: expected a mapping with nodes and relations")
            raw_nodes = [(f"nodes[{i}]", n) for i, n in enumerate(document.get("nodes") or [])]
            raw_relations = [
                (f"relations[{i}]", r) for i, r in enumerate(document.get("relations") or [])
            ]
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise InvalidDocumentError(f"{path}: not valid JSONL/YAML: {exc}", path=str(path)) from exc
    nodes = []
    for where, raw in raw_nodes:
        parsed = _node(raw, where, problems) if isinstance(raw, dict) else None
        if parsed is None and not isinstance(raw, dict):
            problems.append(f"{where}: a node is a mapping")
        if parsed is not None:
            nodes.append(parsed)
    relations = []
    for where, raw in raw_relations:
        rel = _relation(raw, where, problems) if isinstance(raw, dict) else None
        if rel is not None:
            relations.append(rel)
    ids = [n.node_id for n in nodes]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        problems.append(f"duplicate node ids: {', '.join(duplicates[:5])}")
    return DeclaredGraph(tuple(nodes), tuple(relations)), problems


Chunks = tuple[tuple[str, str], ...]  # (chunk_id, text) of a document's latest version


def referenced_documents(graph: DeclaredGraph) -> list[str]:
    """Every document the graph's support refers to, in order of first mention."""
    refs = [
        *(ref for node in graph.nodes for ref in (*node.support, *node.members)),
        *(ref for rel in graph.relations for ref in rel.support),
    ]
    return list(dict.fromkeys(ref.document for ref in refs))


def _resolve(
    namespace: str,
    refs: Sequence[SupportRef],
    where: str,
    chunks_of: Mapping[str, Chunks],
    problems: list[str],
) -> list[tuple[str, str | None]]:
    """(chunk_id, role) for each reference; problems for missing documents or quotes."""
    found: list[tuple[str, str | None]] = []
    for ref in refs:
        chunks = chunks_of.get(ref.document, ())
        if not chunks:
            problems.append(f"{where}: document {ref.document!r} is not in namespace {namespace!r}")
            continue
        if ref.quote is None:
            found.extend((cid, ref.role) for cid, _ in chunks)
            continue
        wanted = " ".join(ref.quote.split())
        quoted = [cid for cid, text in chunks if wanted in " ".join(text.split())]
        if not quoted:
            problems.append(f"{where}: quote {ref.quote!r} not found in {ref.document!r}")
        found.extend((cid, ref.role) for cid in quoted)
    return found


def _knowledge(
    node: DeclaredNode, link: str, support: list[tuple[str, str | None]]
) -> KnowledgeNode:
    chunk_ids = tuple(dict.fromkeys(cid for cid, _ in support))
    return KnowledgeNode(
        node_id=node.node_id,
        kind=node.kind,
        name=node.name,
        supporting_chunk_ids=chunk_ids,
        description=node.description,
        node_type=node.node_type,
        aliases=node.aliases,
        support_link=link,
        support_roles=tuple((cid, role) for cid, role in support if role),
    )


async def ingest_graph_file(store: GraphStore, path: Path, namespace: str) -> GraphFileReport:
    """Validate a declared graph against the store, then write it in one transaction."""
    graph, problems = _parse(path)
    chunks_of: dict[str, Chunks] = {}
    for document_id in referenced_documents(graph):
        views = await store.document_chunks(namespace, document_id)
        chunks_of[document_id] = tuple((v.chunk_id, v.text) for v in views)
    nodes, relations, report = draft_declared_graph(graph, chunks_of, path, namespace, problems)
    await store.write_graph(namespace, nodes, relations)
    return report


def draft_declared_graph(
    graph: DeclaredGraph,
    chunks_of: Mapping[str, Chunks],
    path: Path,
    namespace: str,
    problems: Sequence[str] = (),
) -> tuple[list[KnowledgeNode], list[Relation], GraphFileReport]:
    """Pure: the nodes and relations a declared graph stands for, given the latest chunks of
    the documents it refers to; raise with every problem (``problems``: found already)."""
    problems = list(problems)
    nodes: list[KnowledgeNode] = []
    support_of: dict[str, list[tuple[str, str | None]]] = {}
    for node in graph.nodes:
        where = f"node {node.node_id}"
        support = _resolve(namespace, node.support, where, chunks_of, problems)
        members = _resolve(namespace, node.members, where, chunks_of, problems)
        support_of[node.node_id] = support or members
        if support:
            nodes.append(_knowledge(node, node.link, support))
        if members:
            nodes.append(_knowledge(node, PART_OF, members))
    # Mentions first, so a stronger link declared for the same chunk upgrades them.
    nodes.sort(key=lambda n: n.support_link != MENTIONS)
    report = GraphFileReport(path=str(path), namespace=namespace, nodes=len(graph.nodes))
    relations: list[Relation] = []
    for rel in graph.relations:
        where = f"relation {rel.source} -{rel.relation_type}-> {rel.target}"
        support = _resolve(namespace, rel.support, where, chunks_of, problems)
        if not rel.support:
            support = support_of.get(rel.source, [])
            if not support:
                problems.append(f"{where}: needs support (or a declared source node to inherit)")
        for end in (rel.source, rel.target):
            if end not in support_of:
                report.dangling.append(f"{where}: {end!r} is not declared here")
        chunk_ids = tuple(dict.fromkeys(cid for cid, _ in support))
        relations.append(Relation(rel.source, rel.target, rel.relation_type, chunk_ids))
    if problems:
        raise _fail(path, problems)
    report.relations = len(relations)
    report.support_links = sum(len(n.supporting_chunk_ids) for n in nodes)
    return nodes, relations, report
