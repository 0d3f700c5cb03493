"""A store written before per-namespace full-text tables opens, migrates and answers as before.

``data/store-v1.sqlite`` was written by graphctx at schema version 1 (one FTS5 table shared by
every namespace; see ``fulltext_corpus.py``). Opening it with this version must split the
index per namespace in place and give exactly the bundles a fresh store of the same files
gives, then keep taking writes and deletes. The fixture's embeddings were computed on another
machine, whose BLAS may round the last bits differently: scores are compared to 1e-6, every
other field (ids, ranks, text, citations, reasons) exactly.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from fulltext_corpus import (
    DEFAULT_SCOPES,
    PROJECTS,
    QUESTIONS,
    source_prefix,
    without_timings,
    write_files,
)

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

V1_STORE = Path(__file__).parent / "data" / "store-v1.sqlite"
READERS = (["public"], ["public", "secret"], ["secret"])


def provider_on(path: Path, embedder: UniversalSentenceEncoderEmbedder) -> ContextProvider:
    return ContextProvider(
        SqliteGraphStore(path), embedder, default_token_counter(), CallerAssertedGrants()
    )


def answers(provider: ContextProvider) -> list[object]:
    found = []
    for project in PROJECTS:
        for scopes in READERS:
            for question in QUESTIONS:
                for mode in (RetrievalMode.HYBRID, RetrievalMode.AUTO):
                    request = ContextRequest(
                        query=question,
                        principal_id="reader",
                        allowed_scopes=scopes,
                        namespace=project,
                        retrieval_mode=mode,
                    )
                    found.append(
                        without_timings(provider.retrieve(request).model_dump(mode="json"))
                    )
    return found


def _without_floats(value: object) -> object:
    if isinstance(value, float):
        return float
    if isinstance(value, dict):
        return {k: _without_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_floats(v) for v in value]
    return value


def _floats(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in _floats(v)]
    return []


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return {name for (name,) in rows}
    finally:
        conn.close()


@pytest.fixture
def migrated(tmp_path: Path) -> Path:
    copy = tmp_path / "old.sqlite"
    shutil.copyfile(V1_STORE, copy)
    assert "chunk_fts" in tables(copy)
    return copy


def test_an_old_store_gives_the_same_bundles_as_a_fresh_one_after_migration(
    migrated: Path, tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    root = write_files(tmp_path / "files")
    with provider_on(tmp_path / "fresh.sqlite", embedder).open() as fresh:
        for project in PROJECTS:
            report = fresh.ingest_path(
                root / project,
                namespace=project,
                scopes=DEFAULT_SCOPES,
                source_uri_prefix=source_prefix(project),
            )
            assert not report.errors, report.errors
        expected = answers(fresh)
    with provider_on(migrated, embedder).open() as old:
        got = answers(old)
    assert _without_floats(got) == _without_floats(expected)
    assert _floats(got) == pytest.approx(_floats(expected), rel=1e-6, abs=1e-6)
    assert any(item["items"] for item in expected if isinstance(item, dict))
    after = tables(migrated)
    assert "chunk_fts" not in after
    assert {"fulltext_tables", "chunk_fts_1", "chunk_fts_2"} <= after


def test_a_migrated_store_keeps_taking_writes_and_deletes(
    migrated: Path, tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "quartz.md").write_text("# Quartz\n\nThe quartz gauge is checked hourly.\n", "utf-8")
    request = ContextRequest(
        query="quartz gauge", principal_id="reader", allowed_scopes=["public"], namespace="alpha"
    )
    with provider_on(migrated, embedder).open() as provider:
        assert not provider.ingest_path(extra, namespace="alpha", scopes=["public"]).errors
        assert provider.retrieve(request).items[0].document_id == "quartz.md"
        assert provider.delete_document("alpha", "ledger.md") == 1
        ledger = request.model_copy(update={"query": "zirconium ledger Friday"})
        assert "ledger.md" not in {i.document_id for i in provider.retrieve(ledger).items}
    with provider_on(migrated, embedder).open() as reopened:  # a second open migrates nothing
        assert reopened.retrieve(request).items[0].document_id == "quartz.md"
