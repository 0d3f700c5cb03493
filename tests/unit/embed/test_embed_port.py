from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphctx.embed
from graphctx.embed import (
    Embedder,
    OpenAICompatibleEmbedder,
    SentenceTransformersEmbedder,
    UniversalSentenceEncoderEmbedder,
    normalize_rows,
)
from graphctx.embed.port import prepare_texts
from graphctx.errors import EmbeddingError


def test_public_names_are_sorted_and_all_importable() -> None:
    names = graphctx.embed.__all__
    assert names == sorted(names)
    assert all(hasattr(graphctx.embed, name) for name in names)


def test_every_adapter_provides_the_embedder_port_members_without_doing_io() -> None:
    adapters: list[Embedder] = [  # mypy checks the structural match here
        UniversalSentenceEncoderEmbedder(),
        SentenceTransformersEmbedder("/nonexistent/model"),
        OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m"),
    ]
    members = ("name", "dimension", "embed_documents", "embed_query")
    for adapter in adapters:
        assert all(inspect.getattr_static(adapter, member, None) for member in members)
    assert [adapter.name for adapter in adapters] == [
        "use-multilingual-v3",
        "st:/nonexistent/model",
        "openai:m",
    ]


def test_normalize_rows_scales_rows_to_unit_length_as_float32() -> None:
    result = normalize_rows([[3.0, 4.0], [0.0, 2.0]])
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, [[0.6, 0.8], [0.0, 1.0]], rtol=1e-6)


def test_normalize_rows_leaves_all_zero_rows_at_zero() -> None:
    result = normalize_rows(np.zeros((2, 3)))
    np.testing.assert_array_equal(result, np.zeros((2, 3), dtype=np.float32))


@pytest.mark.parametrize(
    "bad",
    [[[1.0, float("nan")]], [[float("inf"), 0.0]], [1.0, 2.0], [[1.0], [1.0, 2.0]], [["a", "b"]]],
    ids=["nan", "inf", "one-dimensional", "ragged", "strings"],
)
def test_normalize_rows_rejects_anything_but_a_finite_matrix(bad: object) -> None:
    with pytest.raises(EmbeddingError):
        normalize_rows(bad)  # type: ignore[arg-type]


@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, max_side=8),
        elements=st.floats(-1e6, 1e6, allow_nan=False),
    )
)
def test_normalized_rows_have_unit_or_zero_norm(matrix: np.ndarray) -> None:
    norms = np.linalg.norm(normalize_rows(matrix).astype(np.float64), axis=1)
    assert np.all((np.abs(norms - 1.0) < 1e-5) | (norms == 0.0))


def test_a_bare_string_is_rejected_instead_of_embedding_each_character() -> None:
    with pytest.raises(TypeError):
        prepare_texts("부당해고")


def test_non_string_items_are_rejected() -> None:
    with pytest.raises(TypeError):
        prepare_texts(["ok", 3])  # type: ignore[list-item]


def test_lone_surrogates_are_replaced_so_one_bad_text_cannot_fail_a_batch() -> None:
    assert prepare_texts(["ok", "a\udcffb"]) == ["ok", "a?b"]
