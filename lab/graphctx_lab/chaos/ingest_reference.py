"""The uninterrupted reference run the ingest chaos scenarios compare against.

Writes the two-pass corpus, ingests pass 1 into an empty store and pass 2 on top of a copy,
each in a child process exactly as a trial does, and keeps both stores and their snapshots.
Every version either pass writes is then known row for row, and every document's state
before and after each pass: what a correct store may show at any moment of that pass.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from graphctx.embed import Embedder, UniversalSentenceEncoderEmbedder
from graphctx_lab.chaos.ingest_corpus import write_corpus
from graphctx_lab.chaos.ingest_driver import run_ingest_to_completion
from graphctx_lab.chaos.sqlite_checks import KnownVersions
from graphctx_lab.chaos.sqlite_digest import StoreSnapshot, read_snapshot

__all__ = ["IngestPass", "IngestReference", "build_reference", "copy_store", "discard_store"]


@dataclass(frozen=True)
class IngestPass:
    corpus: Path
    start_from: Path | None  # the reference store the pass starts from (None: an empty one)
    before: StoreSnapshot | None
    after: StoreSnapshot
    ingest_s: float  # the uninterrupted run, from ``opened`` to exit
    reference_store: Path  # the store the uninterrupted run left (closed; copy, never write)

    def allowed_states(self) -> dict[tuple[str, str], set[str]]:
        """Each document's state before or after this pass: nothing in between is correct."""
        allowed = {doc: {state} for doc, state in self.after.document_states.items()}
        if self.before is not None:
            for doc, state in self.before.document_states.items():
                allowed.setdefault(doc, set()).add(state)
        return allowed


@dataclass(frozen=True)
class IngestReference:
    passes: tuple[IngestPass, IngestPass]
    known: KnownVersions
    embedder: Embedder  # loaded once, for retrieval in the scenario's own process


def copy_store(source: Path, target: Path) -> None:
    """Copy a closed store with SQLite's backup API (reads ``source`` read-only)."""
    with (
        closing(sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)) as src,
        closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def discard_store(path: Path) -> None:
    """Delete a closed store and its WAL files: a long run keeps only failed trials' stores."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def build_reference(workdir: Path, seed: int) -> IngestReference:
    first, second = workdir / "corpus-v1", workdir / "corpus-v2"
    write_corpus(first, seed, second_pass=False)
    write_corpus(second, seed, second_pass=True)
    store1, store2 = workdir / "reference-1.sqlite", workdir / "reference-2.sqlite"
    run1 = run_ingest_to_completion(store1, first)
    snapshot1 = read_snapshot(store1)
    copy_store(store1, store2)
    run2 = run_ingest_to_completion(store2, second)
    snapshot2 = read_snapshot(store2)
    passes = (
        IngestPass(first, None, None, snapshot1, run1.ingest_s, store1),
        IngestPass(second, store1, snapshot1, snapshot2, run2.ingest_s, store2),
    )
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.embed_documents(["warm up"])
    return IngestReference(passes, KnownVersions.of([snapshot1, snapshot2]), embedder)
