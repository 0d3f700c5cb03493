"""The optional parts of graphctx and the extra that installs each.

A plain ``pip install graphctx`` runs the embedded store, the offline embedder, the CLI, the
demo and ``graphctx eval``. The service and the Neo4j backend need an extra: the package that
holds one calls :func:`require_extra` before it imports anything of the extra's, so using it
without the extra is a :class:`~graphctx.errors.MissingExtraError` that names the extra, not a
``ModuleNotFoundError`` from deep inside. (The e5 and sentence-transformers embedders import
their engine when they first load, and raise the same error there.)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Final

from graphctx.errors import MissingExtraError

__all__ = ["EXTRAS", "Extra", "require_extra"]


@dataclass(frozen=True)
class Extra:
    name: str
    feature: str  # what needs it, as the error message says it
    modules: tuple[str, ...]  # what graphctx imports from its packages, checked in this order


EXTRAS: Final = {
    extra.name: extra
    for extra in (
        Extra(
            "server",
            "the service (HTTP, MCP, explorer)",
            (
                "fastapi",
                "starlette",
                "uvicorn",
                "anyio",
                "python_multipart",
                "mcp",
                "mcp_types",
                "pydantic_settings",
                "prometheus_client",
            ),
        ),
        Extra("neo4j", "the Neo4j backend", ("neo4j",)),
        Extra("ann", "the approximate vector index (SqliteGraphStore ann=)", ("faiss",)),
        Extra("completion", "shell completion (graphctx completion)", ("shtab",)),
        Extra("client", "the HTTP client (graphctx.client)", ("httpx",)),
        Extra("langchain", "the LangChain retriever", ("langchain_core",)),
        Extra("llamaindex", "the LlamaIndex retriever", ("llama_index.core",)),
        Extra("agent-framework", "the Agent Framework context provider", ("agent_framework",)),
    )
}


def require_extra(name: str) -> None:
    """Import the extra's modules; raise MissingExtraError naming the extra if one is missing."""
    extra = EXTRAS[name]
    for module in extra.modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise MissingExtraError(extra.name, extra.feature, module) from exc
