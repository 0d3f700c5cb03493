"""A chunk's embedding travels to Neo4j as a float32 Vector, and only finite ones do."""

from __future__ import annotations

import numpy as np
import pytest
from neo4j.vector import Vector

from graphctx.store.neo4j.writes import chunk_embedding, chunk_row
from graphctx.store.records import NewChunk
from graphctx.testing.fixtures import make_document, unit_vector


def test_a_chunk_embedding_travels_as_the_float32_vector_of_its_values() -> None:
    document = make_document("ns", "d", "kafka lag", {"eng"})
    values = unit_vector("kafka")
    chunk = NewChunk(0, 0, 9, "kafka lag", values)

    sent = chunk_embedding(document, chunk)

    assert isinstance(sent, Vector)
    assert sent.dtype == "f32"
    assert sent.to_native() == values.astype(np.float64).tolist()
    assert "embedding" not in chunk_row(document, 1, chunk, 1)  # set apart, by the procedure


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_chunk_embedding_that_is_not_finite_is_refused(bad: float) -> None:
    document = make_document("ns", "d", "kafka lag", {"eng"})
    values = unit_vector("kafka").copy()
    values[3] = bad

    with pytest.raises(ValueError, match="NaN or infinite"):
        chunk_embedding(document, NewChunk(0, 0, 9, "kafka lag", values))
