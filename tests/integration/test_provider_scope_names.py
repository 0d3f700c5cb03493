"""The Python faces refuse one scope given as a plain string, as ``ContextRequest`` does:
read as a sequence it would be its characters, each a scope of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.errors import InvalidRequestError
from graphctx.provider import ContextProvider


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kafka.md").write_text("# Kafka\n\nThe Kafka cluster runs on three brokers.\n")
    return root


@pytest.mark.parametrize("field", ["scopes", "scope_ceiling"])
def test_a_plain_string_is_refused_before_anything_is_written(
    docs: Path, provider: ContextProvider, field: str
) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        provider.ingest_path(docs, namespace="ops", **{field: "eng"})  # type: ignore[arg-type]
    assert raised.value.field == field
    provider.ingest_path(docs, namespace="probe", scopes=["e"])
    assert provider.list_documents("ops", ["e", "n", "g", "eng"]) == []


def test_listing_refuses_a_plain_string_and_takes_a_list(
    docs: Path, provider: ContextProvider
) -> None:
    provider.ingest_path(docs, namespace="ops", scopes=["eng"])
    with pytest.raises(InvalidRequestError):
        provider.list_documents("ops", "eng")
    assert len(provider.list_documents("ops", ["eng"])) == 1
    assert provider.list_documents("ops", ["e"]) == []
