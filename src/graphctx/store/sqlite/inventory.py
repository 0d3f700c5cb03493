"""What namespaces an embedded store file holds, read straight from the file.

For the local CLI only (``graphctx search`` warns when it searches an empty or unknown
namespace): whoever runs it can read the file anyway, so naming its namespaces reveals
nothing new. The service never calls this; over HTTP a namespace is a project, and an unknown
project answers exactly like a hidden one.
"""

from __future__ import annotations

from pathlib import Path

from graphctx.store.sqlite.schema import connect

__all__ = ["namespace_document_counts"]

_COUNTS = """
SELECT n.namespace,
       (SELECT count(*) FROM documents d WHERE d.namespace = n.namespace AND d.is_latest = 1)
FROM namespaces n ORDER BY n.namespace
"""


def namespace_document_counts(path: Path) -> dict[str, int]:
    """Every namespace the store has written, with its count of documents (latest versions)."""
    conn = connect(path, read_only=True)
    try:
        return {namespace: int(count) for namespace, count in conn.execute(_COUNTS)}
    finally:
        conn.close()
