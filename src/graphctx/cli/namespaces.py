"""The warning ``graphctx search`` prints when its namespace is empty or unknown to the store.

Without it a misspelt ``--namespace`` answers ``no_evidence`` like a question the documents do
not cover. Only an embedded store file is looked at (see :mod:`graphctx.store.sqlite.inventory`
for why naming its namespaces is safe); a Neo4j location gets no warning.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphctx.errors import GraphctxError
from graphctx.store.locations import is_neo4j_location

__all__ = ["namespace_warning"]

MAX_NAMED = 10  # namespaces named in the warning, the rest counted


def namespace_warning(store: str, namespace: str) -> str | None:
    """One line saying ``namespace`` is unknown or empty and which namespaces have documents;
    ``None`` when it has documents (or the store is not a local file)."""
    if is_neo4j_location(store):
        return None
    from graphctx.store.sqlite.inventory import namespace_document_counts

    try:
        counts = namespace_document_counts(Path(store))
    except (GraphctxError, sqlite3.Error):
        return None  # the search itself has reported on the store
    if counts.get(namespace, 0) > 0:
        return None
    if namespace in counts:
        where = f"namespace {namespace!r} in {store} is empty"
    else:
        where = f"namespace {namespace!r} is not in the store {store}"
    return f"{where}; {_with_documents(counts)}"


def _with_documents(counts: dict[str, int]) -> str:
    filled = [name for name, count in counts.items() if count > 0]
    if not filled:
        return "no namespace in it has documents"
    named = ", ".join(repr(name) for name in filled[:MAX_NAMED])
    more = f" and {len(filled) - MAX_NAMED} more" if len(filled) > MAX_NAMED else ""
    return f"namespaces with documents: {named}{more}"
