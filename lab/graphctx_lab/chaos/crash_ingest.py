"""``ingest-sigkill``: SIGKILL the real ingest at random moments; the store stays whole.

Set-up (once): write a two-pass corpus (:mod:`graphctx_lab.chaos.ingest_corpus`), then ingest it
uninterrupted, pass 1 into an empty store and pass 2 on top, each in a child process, and
snapshot both reference stores (:mod:`graphctx_lab.chaos.sqlite_digest`).

A trial starts from an empty store (even trials, pass 1) or from a copy of the pass-1
reference (odd trials, pass 2: supersession, scope-only and metadata-only changes). It runs
the ingest child (:mod:`graphctx_lab.chaos.ingest_driver`) ``KILLS_PER_TRIAL`` times, each time
SIGKILLing it after a delay drawn from the trial's rng over the time the reference needed for
the work still left; after every kill it checks, with no ingest running:

(a) the store opens: ``PRAGMA integrity_check`` and ``foreign_key_check`` are clean on the
    first connection after the kill (which runs WAL recovery, as a fresh process would);
(b) no partial document is visible: every version in the store equals, row for row, that
    version in the reference (document row, chunks, embeddings, full-text rows), and every
    document's state (latest version, supersession, scopes) is its state before the pass or
    after it, nothing in between; three hybrid queries through the provider return only
    chunks of such complete versions, with spans that slice their text. A version's graph
    support is the reference's or absent: the ingest runs with ``--extract-graph``, whose
    graph commits once, after the documents (it resolves links across them), so a kill in
    between leaves whole versions awaiting their graph (counted in the report);

then runs the ingest to completion and checks (c): the canonical digest equals the
reference's for that pass (exclusions: see :mod:`graphctx_lab.chaos.sqlite_digest`). Before the
fix in :func:`graphctx.ingest.pipeline.ingest_sources`, (c) failed whenever a kill landed in
that window: the re-run found every document unchanged and never extracted the graph.

Each trial starts three child processes (~3 s of interpreter and model start-up each on
the 2-core machine), so the default 10 trials (20 kills) take about two minutes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from graphctx.adapters import build_provider
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx_lab.chaos.ingest_corpus import CORPUS_NAMESPACE, DEFAULT_SCOPE, SCOPES
from graphctx_lab.chaos.ingest_driver import IngestChild, run_ingest_to_completion
from graphctx_lab.chaos.ingest_reference import (
    IngestPass,
    IngestReference,
    build_reference,
    copy_store,
    discard_store,
)
from graphctx_lab.chaos.scenario import ChaosEnv, FunctionScenario, Scenario, Trial, TrialRunner
from graphctx_lab.chaos.sqlite_checks import response_problems, snapshot_problems
from graphctx_lab.chaos.sqlite_digest import StoreSnapshot, integrity_problems, read_snapshot

__all__ = ["SCENARIOS"]

KILLS_PER_TRIAL = 2  # kill, restart, kill again, then run to completion
QUERIES = ("gateway restart rollback", "배포 장애 복구", "expense approval policy")
QUERY_MAX_TOKENS = 4_000


def _remaining_share(store: Path, stage: IngestPass) -> float:
    """Share of the pass's documents not yet in their final state (1.0 for a new store)."""
    if not store.exists():
        return 1.0
    done = read_snapshot(store).document_states
    target = stage.after.document_states
    finished = sum(1 for doc, state in target.items() if done.get(doc) == state)
    return max(0.05, 1.0 - finished / len(target))


def _retrieval_problems(store: Path, ref: IngestReference, snapshot: StoreSnapshot) -> list[str]:
    problems: list[str] = []
    with build_provider(store, embedder=ref.embedder).open() as provider:
        for query in QUERIES:
            response = provider.retrieve(
                ContextRequest(
                    query=query,
                    principal_id="chaos",
                    allowed_scopes=[*SCOPES, DEFAULT_SCOPE],
                    namespace=CORPUS_NAMESPACE,
                    retrieval_mode=RetrievalMode.HYBRID,
                    max_tokens=QUERY_MAX_TOKENS,
                )
            )
            problems += response_problems(response, ref.known, snapshot.versions)
    return problems


def _awaiting_graph(snapshot: StoreSnapshot, ref: IngestReference) -> int:
    """Complete versions the kill caught between their commit and the graph's."""
    return sum(
        1
        for key, content in snapshot.versions.items()
        if content.graph_sha256 is None and ref.known.versions[key].graph_sha256 is not None
    )


def _check_after_kill(trial: Trial, store: Path, stage: IngestPass, ref: IngestReference) -> int:
    """Check (a) and (b) of the module docstring; returns the versions awaiting a graph."""
    started = time.monotonic()
    broken = integrity_problems(store)
    trial.check(not broken, f"store does not open cleanly after SIGKILL: {broken[:3]}")
    trial.measure("recovery_check_ms", (time.monotonic() - started) * 1000)
    snapshot = read_snapshot(store)
    partial = snapshot_problems(snapshot, ref.known, stage.allowed_states())
    trial.check(not partial, f"partial state visible after SIGKILL: {partial[:3]}")
    torn = _retrieval_problems(store, ref, snapshot)
    trial.check(not torn, f"retrieval returned torn evidence after SIGKILL: {torn[:3]}")
    return _awaiting_graph(snapshot, ref)


def _run_trial(trial: Trial, ref: IngestReference) -> None:
    stage = ref.passes[trial.index % 2]
    store = trial.workdir / "store.sqlite"
    if stage.start_from is not None:
        copy_store(stage.start_from, store)
    kills = awaiting_graph = 0
    for attempt in range(KILLS_PER_TRIAL):
        delay = trial.rng.uniform(0.0, stage.ingest_s * _remaining_share(store, stage))
        with IngestChild(store, stage.corpus) as child:
            child.wait_opened()
            run = child.run_for(delay)
        if run.killed:
            kills += 1
            trial.measure(f"kill_{attempt + 1}_after_ms", run.ingest_s * 1000)
        awaiting_graph += _check_after_kill(trial, store, stage, ref)
    trial.measure("kills_landed", kills)
    trial.measure("versions_awaiting_graph_after_kills", awaiting_graph)
    run_ingest_to_completion(store, stage.corpus)
    final = read_snapshot(store)
    trial.check(
        final.sha256 == stage.after.sha256,
        f"re-run did not converge to the uninterrupted state: {final.differences(stage.after)}",
    )
    discard_store(store)


def _setup(env: ChaosEnv) -> Iterator[TrialRunner]:
    ref = build_reference(env.workdir, env.seed)

    def run(trial: Trial) -> None:
        _run_trial(trial, ref)

    yield run


SCENARIOS: list[Scenario] = [
    FunctionScenario(
        name="ingest-sigkill",
        promise=(
            "SIGKILL at any moment of an ingest or re-ingest: the store opens, no partial"
            " document is visible to the store or to retrieval, and re-running converges to"
            " exactly the uninterrupted state"
        ),
        default_trials=10,
        setup=_setup,
    )
]
