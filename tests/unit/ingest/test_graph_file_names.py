"""Names in a declared graph file are checked whole: a trailing newline is not a valid name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.graph_file import load_graph_file


def graph_file(
    tmp_path: Path, *, node_id: str = "sys:pg", link: str = "SUPPORTS", relation: str = "DEPENDS_ON"
) -> Path:
    path = tmp_path / "graph.jsonl"
    records = [
        {"id": node_id, "name": "PostgreSQL", "support": ["adr-1"], "link": link},
        {"id": "sys:x", "name": "X", "support": ["adr-1"]},
        {"source": "sys:x", "type": relation, "target": "sys:pg"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_well_formed_names_load(tmp_path: Path) -> None:
    graph = load_graph_file(graph_file(tmp_path))
    assert [n.node_id for n in graph.nodes] == ["sys:pg", "sys:x"]
    assert graph.relations[0].relation_type == "DEPENDS_ON"


@pytest.mark.parametrize(
    "names",
    [
        {"relation": "DEPENDS_ON\n"},
        {"link": "SUPPORTS\n"},
        {"node_id": "sys:pg\n"},
    ],
)
def test_a_name_with_a_trailing_newline_is_refused(tmp_path: Path, names: dict[str, str]) -> None:
    with pytest.raises(InvalidDocumentError) as raised:
        load_graph_file(graph_file(tmp_path, **names))
    assert raised.value.code == "graph_file_invalid"
