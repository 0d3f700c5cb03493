"""A document's vectors do not depend on the documents ingested in the same batch.

An embedder's last bits depend on which texts share its matrix products (the default one
differs by ~2e-7 between a text embedded alone and in a batch), so ingest embeds each
document in a call of its own; otherwise the same document would score differently
depending on what happened to be ingested next to it."""

from __future__ import annotations

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.ingest.batching import embed_sources
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument

TEXTS = {
    "notes": "# Notes\n\n결제 게이트웨이를 재시작하기 전에 롤백 작업을 실행한다.",
    "ledger": "# Ledger\n\nThe zirconium ledger is reconciled every Friday by the payments team.",
    "rollback": "# Rollback\n\nTo roll back the checkout service, pause the pipeline first.",
}


def _source(document_id: str) -> SourceDocument:
    meta = DocumentMetadata(document_id=document_id, scopes=("eng",))
    return SourceDocument(f"test://{document_id}", MediaType.MARKDOWN, TEXTS[document_id], meta)


def test_a_document_embeds_to_the_same_bits_alone_and_in_a_batch(
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    together = embed_sources([_source(d) for d in TEXTS], embedder)
    for document_id, batched in zip(TEXTS, together, strict=True):
        (alone,) = embed_sources([_source(document_id)], embedder)
        assert [list(c.embedding) for c in batched] == [list(c.embedding) for c in alone]
