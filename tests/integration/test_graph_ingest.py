"""Knowledge-graph ingest: offline extraction at ingest, and declared graph files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphctx.contract import ContextRequest, NodeKind, RetrievalMode
from graphctx.errors import InvalidDocumentError
from graphctx.ingest.extract import OfflineExtractor
from graphctx.provider import ContextProvider


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


DOCS = {
    "adr/0001-postgres.md": (
        "---\ndocument_id: adr-1\ntitle: Use PostgreSQL\nscopes: [eng]\n---\n"
        "We use PostgreSQL with Patroni. Failover steps are in [the runbook]"
        "(../runbooks/failover.md).\n"
    ),
    "runbooks/failover.md": (
        "---\ndocument_id: rb-failover\ntitle: Database failover\nscopes: [eng]\n---\n"
        "Promote the replica with patronictl and recycle application connections.\n"
    ),
    "runbooks/unrelated.md": (
        "---\ndocument_id: rb-other\ntitle: Cache flush\nscopes: [eng]\n---\n"
        "Flush the redis keys by prefix.\n"
    ),
}

STATUTE = [
    {"id": "law-28", "law": "근로기준법", "article_no": "제28조", "title": "구제신청",
     "text": "제23조에 따른 부당해고등이 있으면 노동위원회에 구제를 신청할 수 있다."},
    {"id": "law-23", "law": "근로기준법", "article_no": "제23조", "title": "해고 등의 제한",
     "text": "사용자는 정당한 이유 없이 해고하지 못한다."},
]  # fmt: skip


def ask(provider: ContextProvider, query: str, namespace: str) -> list[tuple[str, list[str]]]:
    response = provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="p",
            allowed_scopes=["eng", "law"],
            namespace=namespace,
            retrieval_mode=RetrievalMode.GRAPH,
        )
    )
    return [
        (i.document_id, [f"{s.kind.value}:{s.id}:{s.via}" for s in i.provenance_path])
        for i in response.items
        if i.retrieval_scores.graph is not None
    ]


def test_markdown_links_become_references_walked_by_expansion(
    tmp_path: Path, provider: ContextProvider
) -> None:
    report = provider.ingest_path(
        write(tmp_path / "docs", DOCS), namespace="md", extractor=OfflineExtractor()
    )
    assert report.graph is not None
    assert (report.graph.documents, report.graph.references) == (3, 1)
    reached = dict(ask(provider, "PostgreSQL with Patroni decision", "md"))
    assert reached["rb-failover"][1:] == [
        "Entity:doc:adr-1:SUPPORTS",
        "Entity:doc:rb-failover:REFERENCES",
        reached["rb-failover"][-1],
    ]
    assert reached["rb-failover"][-1].endswith(":<-SUPPORTS")


def test_unchanged_documents_are_not_extracted_again(
    tmp_path: Path, provider: ContextProvider
) -> None:
    root = write(tmp_path / "docs", DOCS)
    provider.ingest_path(root, namespace="md", extractor=OfflineExtractor())
    again = provider.ingest_path(root, namespace="md", extractor=OfflineExtractor())
    assert again.graph is None
    assert dict(ask(provider, "PostgreSQL with Patroni decision", "md"))


def test_statute_records_reference_each_other_by_article_number(
    tmp_path: Path, provider: ContextProvider
) -> None:
    path = tmp_path / "law.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in STATUTE), "utf-8")
    provider.ingest_path(path, namespace="law", scopes=["law"], extractor=OfflineExtractor())
    reached = dict(ask(provider, "노동위원회에 구제를 신청", "law"))
    assert "Entity:article:근로기준법:23:REFERENCES" in reached["law-23"]


def test_a_declared_graph_with_a_bad_reference_writes_nothing(
    tmp_path: Path, provider: ContextProvider
) -> None:
    provider.ingest_path(write(tmp_path / "docs", DOCS), namespace="md")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "nodes:\n"
        "  - {id: sys:pg, name: PostgreSQL, support: [adr-1]}\n"
        "  - {id: sys:x, name: X, support: [no-such-doc]}\n"
        "  - {id: sys:y, name: Y, support: [{document: adr-1, quote: not in the text}]}\n"
        "relations:\n"
        "  - {source: sys:pg, type: depends, target: sys:x}\n",
        encoding="utf-8",
    )
    with pytest.raises(InvalidDocumentError) as raised:
        provider.ingest_graph(bad, namespace="md")
    assert raised.value.code == "graph_file_invalid"
    assert "no-such-doc" in raised.value.message
    assert "not in the text" in raised.value.message
    assert "DEPENDS_ON" in raised.value.message
    response = provider.retrieve(
        ContextRequest(
            query="Tell me about PostgreSQL",
            principal_id="p",
            allowed_scopes=["eng"],
            namespace="md",
        )
    )
    assert not any(r.startswith("ontology") for r in response.manifest.route.reasons)


def test_a_jsonl_graph_is_read_like_yaml_and_reports_dangling_ends(
    tmp_path: Path, provider: ContextProvider
) -> None:
    provider.ingest_path(write(tmp_path / "docs", DOCS), namespace="md")
    graph = tmp_path / "graph.jsonl"
    graph.write_text(
        "\n".join(
            json.dumps(line)
            for line in (
                {"id": "sys:pg", "type": "System", "name": "PostgreSQL", "support": ["adr-1"]},
                {"id": "rb:failover", "name": "failover runbook", "support": ["rb-failover"]},
                {"source": "rb:failover", "type": "REQUIRES", "target": "sys:pg"},
                {"source": "sys:pg", "type": "OWNED_BY", "target": "team:platform"},
            )
        ),
        encoding="utf-8",
    )
    report = provider.ingest_graph(graph, namespace="md")
    assert (report.nodes, report.relations) == (2, 2)
    assert len(report.dangling) == 1
    reached = ask(provider, "What does the failover runbook require?", "md")
    assert any(f"{NodeKind.ENTITY.value}:sys:pg:REQUIRES" in path for _, path in reached)
