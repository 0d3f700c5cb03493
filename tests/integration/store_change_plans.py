"""Random change plans for store-level ranking properties: writes, scope rewrites, deletes.

Shared by the full-text equivalence properties (``test_sqlite_fulltext_scorer_equivalence``,
``test_sqlite_lazy_bm25``); each adds its own question step and checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphctx.store.port import GraphStore
from graphctx.testing.fixtures import make_document, paragraphs

EMBEDDER = "test-embedder"


@dataclass(frozen=True)
class Write:
    namespace: str
    document: int
    paragraphs: tuple[str, ...]
    scopes: frozenset[str]


@dataclass(frozen=True)
class Narrow:  # the same document again under fewer scopes: a scope rewrite
    index: int


@dataclass(frozen=True)
class Delete:
    index: int


async def apply_change(
    store: GraphStore, step: Write | Narrow | Delete, written: list[Write]
) -> list[Write]:
    """Apply one change step to ``store``; ``written`` (the documents now stored) after it."""
    if isinstance(step, Write):
        document_id = f"d{step.document}"
        text = "\n\n".join(step.paragraphs)
        earlier = [
            w for w in written if (w.namespace, w.document) == (step.namespace, step.document)
        ]
        if earlier:  # a new version may not widen the old ones' scopes
            await store.delete_document(step.namespace, document_id)
        document = make_document(step.namespace, document_id, text, set(step.scopes))
        await store.write_document(document, paragraphs(text), EMBEDDER)
        return [w for w in written if w not in earlier] + [step]
    if not written:
        return written
    target = written[step.index % len(written)]
    document_id = f"d{target.document}"
    if isinstance(step, Delete):
        await store.delete_document(target.namespace, document_id)
        return [w for w in written if w is not target]
    if len(target.scopes) <= 1:
        return written
    narrowed = frozenset(sorted(target.scopes)[1:])
    text = "\n\n".join(target.paragraphs)
    document = make_document(target.namespace, document_id, text, set(narrowed))
    await store.write_document(document, paragraphs(text), EMBEDDER)
    changed = Write(target.namespace, target.document, target.paragraphs, narrowed)
    return [changed if w is target else w for w in written]
