"""Which embedder wrote a namespace, and the one rule that keeps its vectors comparable.

Every namespace records the name and dimension of the embedder that wrote its first chunk
(SQLite: the ``namespaces`` table; Neo4j: ``Namespace.embedder`` / ``.dimension``). Both
backends have written that record since their first version, so an existing store needs no
migration. A namespace without a record (it never held a chunk) adopts the first embedder
that writes a chunk to it, and a query against it is not refused: there is no vector to
compare with. After that, a write or a query with any other embedder is refused with
:class:`~graphctx.errors.EmbedderMismatchError`, naming both.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphctx.errors import EmbedderMismatchError

__all__ = ["EmbedderRecord", "require_same_embedder"]


@dataclass(frozen=True)
class EmbedderRecord:
    """The embedder a namespace was written with."""

    name: str
    dimension: int

    def __str__(self) -> str:
        return f"{self.name} ({self.dimension} dims)"


def require_same_embedder(
    namespace: str, stored: EmbedderRecord | None, name: str, dimension: int | None = None
) -> None:
    """Raise ``EmbedderMismatchError`` unless ``name`` (and ``dimension``, when known) is the
    embedder ``stored`` for ``namespace``; a namespace without a record accepts any."""
    if stored is None:
        return
    if stored.name == name and (dimension is None or stored.dimension == dimension):
        return
    requested = name if dimension is None else str(EmbedderRecord(name, dimension))
    raise EmbedderMismatchError(namespace, str(stored), requested)
