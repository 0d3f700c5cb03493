"""Shared pieces live in rooms of their own, and nothing reaches into another's room for them.

Text analysis (``graphctx.text``) is used by both stores, ingest and retrieval; the LLM port,
clients and HTTP transport (``graphctx.llm``) by embeddings, concept extraction, Text2Cypher
and answer rendering. Neither imports any other part of graphctx (``llm`` only the error
tree), so ingest and retrieval never import each other and neither store imports the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import graphctx

SOURCE = Path(graphctx.__file__).parent

# (importer prefix, forbidden prefixes, allowed exceptions)
RULES: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("graphctx.text", ("graphctx",), ("graphctx.text",)),
    ("graphctx.llm", ("graphctx",), ("graphctx.llm", "graphctx.errors")),
    ("graphctx.ingest", ("graphctx.retrieve",), ()),
    ("graphctx.retrieve", ("graphctx.ingest",), ()),
    ("graphctx.store.neo4j", ("graphctx.store.sqlite",), ()),
    ("graphctx.store.sqlite", ("graphctx.store.neo4j",), ()),
]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, module: str) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*head, base] if base else head)
            found.add(base)
    return found


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        for importer, forbidden, allowed in RULES:
            if not within(module, importer):
                continue
            for target in sorted(imported_modules(path, module)):
                if any(within(target, f) for f in forbidden) and not any(
                    within(target, a) for a in allowed
                ):
                    found.append(f"{module} imports {target}")
    return found


def test_shared_rooms_import_nothing_from_the_rooms_that_use_them() -> None:
    assert violations(SOURCE) == []


@pytest.mark.parametrize("importer", [rule[0] for rule in RULES])
def test_every_ruled_package_exists(importer: str) -> None:
    assert (SOURCE.parent / importer.replace(".", "/")).is_dir()
