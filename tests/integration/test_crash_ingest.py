"""A SIGKILLed ingest leaves whole documents only, and a re-run converges exactly.

Also pins the tools the chaos scenario relies on: the state digest compares content, not
write order or time, and the partial-state check does see a version missing a chunk.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path

from graphctx.store.sqlite.fulltext import table_of
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fixtures import make_document, paragraphs
from graphctx_lab.chaos.ingest_corpus import write_corpus
from graphctx_lab.chaos.ingest_driver import IngestChild, run_ingest_to_completion
from graphctx_lab.chaos.ingest_reference import copy_store
from graphctx_lab.chaos.sqlite_checks import KnownVersions, snapshot_problems
from graphctx_lab.chaos.sqlite_digest import integrity_problems, read_snapshot

NAMESPACE = "crash"
TEXTS = {
    "alpha": "Alpha opens the runbook.\n\nAlpha restarts the gateway.",
    "beta": "Beta holds the expense policy.\n\nBeta lists approvals.\n\nBeta ends here.",
}


def _write(path: Path, order: list[str]) -> None:
    async def run() -> None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            for document_id in order:
                text = TEXTS[document_id]
                document = make_document(NAMESPACE, document_id, text, {"eng"})
                await store.write_document(document, paragraphs(text), "test-embedder")
        finally:
            await store.close()

    asyncio.run(run())


def test_digest_is_the_same_whatever_the_write_order(tmp_path: Path) -> None:
    _write(tmp_path / "forward.sqlite", ["alpha", "beta"])
    _write(tmp_path / "backward.sqlite", ["beta", "alpha"])
    forward = read_snapshot(tmp_path / "forward.sqlite")
    backward = read_snapshot(tmp_path / "backward.sqlite")
    assert (forward.sha256, forward.differences(backward)) == (backward.sha256, [])


def test_partial_state_check_sees_a_version_missing_a_chunk(tmp_path: Path) -> None:
    whole, torn = tmp_path / "whole.sqlite", tmp_path / "torn.sqlite"
    _write(whole, ["alpha", "beta"])
    copy_store(whole, torn)
    conn = sqlite3.connect(torn)
    fts = table_of(conn, "crash")
    conn.execute(f"DELETE FROM {fts} WHERE rowid = (SELECT id FROM chunks WHERE ordinal = 2)")
    conn.execute("DELETE FROM chunks WHERE ordinal = 2")
    conn.commit()
    conn.close()
    reference = read_snapshot(whole)
    allowed = {doc: {state} for doc, state in reference.document_states.items()}
    problems = snapshot_problems(read_snapshot(torn), KnownVersions.of([reference]), allowed)
    assert problems == ["VersionKey(namespace='crash', document_id='beta', seq=1) is partial:"
                        " 2/3 chunks or content"]  # fmt: skip


def test_digest_sees_the_lengths_irregular_and_repeated_terms_the_lazy_ranking_reads(
    tmp_path: Path,
) -> None:
    whole = tmp_path / "whole.sqlite"
    _write(whole, ["alpha", "beta"])
    reference = read_snapshot(whole)
    for n, damage in enumerate(
        [
            "DELETE FROM chunk_term_counts WHERE id = (SELECT id FROM chunks WHERE ordinal = 2)",
            "UPDATE chunk_term_counts SET terms = terms + 1 WHERE id = 1",
            "INSERT INTO {fts}_irregular (rowid, terms) VALUES (1, 'don''t')",
            "INSERT INTO {fts}_repeated (rowid, terms) VALUES (1, 'alpha')",
        ]
    ):
        torn = tmp_path / f"torn{n}.sqlite"
        copy_store(whole, torn)
        conn = sqlite3.connect(torn)
        conn.execute(damage.format(fts=table_of(conn, "crash")))
        conn.commit()
        conn.close()
        assert read_snapshot(torn).sha256 != reference.sha256, damage


def test_killed_ingest_never_exposes_a_partial_document(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=3, second_pass=False, documents=16)
    reference_store, store = tmp_path / "reference.sqlite", tmp_path / "store.sqlite"
    reference_run = run_ingest_to_completion(reference_store, corpus)
    reference = read_snapshot(reference_store)
    with IngestChild(store, corpus) as child:
        child.wait_opened()
        run = child.run_for(random.Random(3).uniform(0.2, 0.8) * reference_run.ingest_s)
    assert run.killed
    assert integrity_problems(store) == []
    allowed = {doc: {state} for doc, state in reference.document_states.items()}
    assert snapshot_problems(read_snapshot(store), KnownVersions.of([reference]), allowed) == []
    run_ingest_to_completion(store, corpus)
    assert read_snapshot(store).differences(reference) == []
