"""The Python faces take one scope as a plain string, never as its characters."""

from __future__ import annotations

from pathlib import Path

from graphctx.provider import ContextProvider


def test_one_scope_given_as_a_string_is_that_scope(
    tmp_path: Path, provider: ContextProvider
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kafka.md").write_text("# Kafka\n\nThe Kafka cluster runs on three brokers.\n")
    report = provider.ingest_path(root, namespace="ops", scopes="eng", scope_ceiling="eng")
    assert report.errors == []
    assert len(provider.list_documents("ops", "eng")) == 1
    assert provider.list_documents("ops", "e") == []
